package agents

// frame is what one stream data line says, as far as a call needs it. String values alias
// the line, which is only valid until the next read from the stream.
type frame struct {
	// content, reasoningContent, reasoning and role come from choices[0].delta;
	// reasoningContent is the DeepSeek/SGLang name, reasoning the newer vLLM one.
	content, reasoningContent, reasoning, role jstr
	// tools is choices[0].delta.tool_calls, its null elements left out. Its array is reused
	// from one frame to the next.
	tools []toolDelta
	// finish is choices[0].finish_reason.
	finish jstr
	// object is the top-level "object" ("chat.completion.chunk", or "error" in older vLLM
	// and SGLang error frames).
	object jstr
	// usage is the top-level usage object; hasUsage reports it was present and not null.
	usage    Usage
	hasUsage bool
	// hasError reports a top-level "error" member that is not null.
	hasError bool
}

// isError reports whether the frame is an error frame rather than a chunk.
func (f *frame) isError() bool {
	return f.hasError || f.object.equals("error")
}

// reasoningText returns the reasoning delta, whichever field carries it. When a server sends
// both (vLLM did while renaming), they hold the same text and count once.
func (f *frame) reasoningText() jstr {
	if len(f.reasoningContent.raw) > 0 {
		return f.reasoningContent
	}
	return f.reasoning
}

// maxFastDepth is the nesting the fast scanner handles; deeper lines go to encoding/json.
const maxFastDepth = 64

// scanFrame reads line into f with a single pass over the bytes and no allocation. It
// returns false when it cannot vouch for its reading — invalid JSON, a field of an unexpected
// type, an escaped key, a non-integer usage count, deep nesting — and the caller then decodes
// the line with decodeFrame, which is the reference semantics: exact key names, the last of
// duplicate keys wins, null counts as absent.
func scanFrame(line []byte, f *frame) bool {
	*f = frame{tools: f.tools[:0]}
	s := scanner{b: line}
	if !s.open('{') {
		return false
	}
	for n := 0; s.next('}', n); n++ {
		switch string(s.key()) {
		case "choices":
			s.choices(f)
		case "usage":
			s.usage(f)
		case "object":
			f.object = s.strOrNull()
		case "error":
			f.hasError = !s.null()
			if f.hasError {
				s.skip()
			}
		default:
			s.skip()
		}
	}
	s.ws()
	return !s.bad && s.i == len(s.b)
}

// choices reads the choices array: the first element counts, the rest are only checked.
func (s *scanner) choices(f *frame) {
	f.content, f.reasoningContent, f.reasoning, f.role, f.finish = jstr{}, jstr{}, jstr{}, jstr{}, jstr{}
	f.tools = f.tools[:0]
	if s.null() {
		return
	}
	if !s.open('[') {
		return
	}
	for n := 0; s.next(']', n); n++ {
		if n > 0 {
			s.skip() // later choices (n > 1 requests) are checked, not read
			continue
		}
		if !s.null() {
			s.choice(f)
		}
	}
}

// choice reads one choice object's delta and finish_reason.
func (s *scanner) choice(f *frame) {
	if !s.open('{') {
		return
	}
	for n := 0; s.next('}', n); n++ {
		switch string(s.key()) {
		case "delta":
			s.delta(f)
		case "finish_reason":
			f.finish = s.strOrNull()
		default:
			s.skip()
		}
	}
}

// delta reads a delta object's text fields and tool calls.
func (s *scanner) delta(f *frame) {
	f.content, f.reasoningContent, f.reasoning, f.role = jstr{}, jstr{}, jstr{}, jstr{}
	f.tools = f.tools[:0]
	if s.null() || !s.open('{') {
		return
	}
	for n := 0; s.next('}', n); n++ {
		switch string(s.key()) {
		case "content":
			f.content = s.strOrNull()
		case "reasoning_content":
			f.reasoningContent = s.strOrNull()
		case "reasoning":
			f.reasoning = s.strOrNull()
		case "role":
			f.role = s.strOrNull()
		case "tool_calls":
			s.toolCalls(f)
		default:
			s.skip()
		}
	}
}

// usage reads the usage object, including the cached and reasoning token details.
func (s *scanner) usage(f *frame) { f.usage, f.hasUsage = s.usageObject(chatUsage) }

// usageKeys name a usage object's members: the prompt and output token counts and the
// details objects that hold the cached and the reasoning tokens.
type usageKeys struct{ prompt, output, promptDetails, outputDetails string }

// The usage objects' members in chat completions and in the Responses API.
var (
	chatUsage      = usageKeys{"prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details"}
	responsesUsage = usageKeys{"input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details"}
)

// usageObject reads a usage object with members named by k; false when it is null or absent.
func (s *scanner) usageObject(k usageKeys) (Usage, bool) {
	var u Usage
	if s.null() || !s.open('{') {
		return u, false
	}
	for n := 0; s.next('}', n); n++ {
		switch string(s.key()) {
		case k.prompt:
			u.Prompt = s.intOrNull()
		case k.output:
			u.Completion = s.intOrNull()
		case k.promptDetails:
			u.Cached = s.detail("cached_tokens")
		case k.outputDetails:
			u.Reasoning = s.detail("reasoning_tokens")
		default:
			s.skip()
		}
	}
	return u, true
}

// detail reads the integer member name of a details object (0 if absent or null).
func (s *scanner) detail(name string) int {
	v := 0
	if s.null() || !s.open('{') {
		return 0
	}
	for n := 0; s.next('}', n); n++ {
		if string(s.key()) == name {
			v = s.intOrNull()
		} else {
			s.skip()
		}
	}
	return v
}
