package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/sashabaranov/go-openai"

	"github.com/agentsim/agentsim/workloads"
)

// An agent's request body is written as it is read. go-openai encodes the request without
// its conversation and its tool definitions; the transport (requestTransport) puts the
// conversation where go-openai wrote "messages":null (through the Responses API, "input":null,
// the instructions beside it), one message at a time and the generated text of each in pieces
// of textPiece bytes, and the definitions, the run's one encoded copy, at the end. Neither a
// whole body nor a whole message is held: a coding-agent request is ~0.5 MB of JSON, of which
// one message alone is ~0.4 MB, and thousands are sent at once (docs/speed.md). The bytes are
// those go-openai would have sent, the definitions' member moved last; the body declares its
// length, measured once per message and kept in the message (message.wire).

// wirePlanKey carries a *wirePlan in a request's context.
type wirePlanKey struct{}

// wirePlan is what an agent's request body holds beyond what go-openai encodes.
type wirePlan struct {
	api   int       // wireChat or wireResponses
	msgs  []message // the agent's messages when the request was made; their sizes are measured into them
	seed  int64     // the workload's, for the generated text
	agent int
	tools []byte // the tools array as the API takes it, shared by every request; nil: none
}

// The forms of a body, and the index of a message's size in message.wire.
const (
	wireChat = iota
	wireResponses
)

// textPiece is how much generated text a body makes at once, in bytes.
const textPiece = 4 << 10

// sentinel is the content a message is encoded with to find where its text goes: control
// characters are escaped in JSON, so its encoding appears nowhere else in the message.
const sentinel = "\x00agentsim\x00"

// sentinelJSON is sentinel as JSON encodes it, quotes included.
var sentinelJSON = []byte(`"\u0000agentsim\u0000"`)

// Where go-openai leaves the conversation out of a body, and what takes its place.
var (
	messagesNull = []byte(`"messages":null`)
	inputNull    = []byte(`"input":null`)
	toolsMember  = []byte(`,"tools":`)
)

// newWireBody returns the body of a request whose go-openai encoding (without conversation
// and tools, and with any extra fields merged) is encoded, and its length in bytes.
func newWireBody(plan *wirePlan, encoded []byte) (*wireBody, int64, error) {
	marker := messagesNull
	if plan.api == wireResponses {
		marker = inputNull
	}
	at := bytes.Index(encoded, marker)
	end := bytes.LastIndexByte(encoded, '}')
	if at < 0 || end < at {
		return nil, 0, fmt.Errorf("write request body: go-openai's encoding has no %s member to put the conversation in", marker)
	}
	b := &wireBody{plan: plan, pre: encoded[:at], post: encoded[at+len(marker) : end], i: -1}
	n := len(b.pre) + len(b.post) + 1 // the closing brace
	if plan.tools != nil {
		n += len(toolsMember) + len(plan.tools)
	}
	for i := range plan.msgs {
		n += len(b.separator(i)) + plan.size(i)
	}
	n += len(b.closing())
	return b, int64(n), nil
}

// wireBody is the body of an agent's request, made as it is read. A transport may close it
// from another goroutine while it is being read (see onceBody), so its state is guarded.
type wireBody struct {
	mu        sync.Mutex
	plan      *wirePlan
	pre, post []byte // go-openai's encoding before and after the conversation, its last brace left out
	i         int    // the message being written; -1 before the first, len(msgs) after the last
	cur       []byte // bytes made and not yet read
	piece     []byte // the buffer cur is made in
	text      workloads.TextStream
	textOn    bool   // the current message's generated text is being written
	tail      []byte // the current message's bytes after its text
	stage     int    // how far into what follows the messages (after) it is
	closed    bool
	failed    error // of the encoding of a message, once met
	started   bool  // pre has been handed out
}

// Read implements io.Reader.
func (b *wireBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errBodyClosed
	}
	n := 0
	for n < len(p) {
		if len(b.cur) == 0 && !b.more() {
			break
		}
		k := copy(p[n:], b.cur)
		b.cur, n = b.cur[k:], n+k
	}
	if b.failed != nil {
		return n, b.failed
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Close implements io.Closer.
func (b *wireBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed, b.cur, b.piece, b.tail = true, nil, nil, nil
	return nil
}

// again is the body anew, for a transport that sends it again (the request's GetBody).
func (b *wireBody) again() (io.ReadCloser, error) {
	return &wireBody{plan: b.plan, pre: b.pre, post: b.post, i: -1}, nil
}

// more makes the next bytes into cur; false at the end.
func (b *wireBody) more() bool {
	switch {
	case b.failed != nil:
		return false
	case !b.started:
		b.started, b.cur = true, b.pre
		return true
	case b.textOn:
		b.piece = b.text.Append(b.piece[:0], textPiece)
		b.cur = b.piece
		if b.text.Done() {
			b.textOn = false
		}
		return true
	case b.tail != nil:
		b.cur, b.tail = b.tail, nil
		return true
	case b.i+1 < len(b.plan.msgs):
		b.i++
		b.start(b.i)
		return true
	}
	return b.after()
}

// after makes the next of what follows the messages into cur: the closing of the
// conversation, the rest of go-openai's encoding, the tools and the last brace; false at the
// end.
func (b *wireBody) after() bool {
	b.i = len(b.plan.msgs)
	b.stage++
	switch b.stage {
	case 1:
		b.cur = b.closing()
	case 2:
		b.cur = b.post
	case 3:
		if b.plan.tools == nil {
			return b.after()
		}
		b.cur = toolsMember
	case 4:
		if b.plan.tools == nil {
			return b.after()
		}
		b.cur = b.plan.tools
	case 5:
		b.cur = closingBrace
	default:
		return false
	}
	return true
}

// closingBrace ends the body.
var closingBrace = []byte("}")

// start makes message i's separator and its bytes up to its text into cur, and sets up the
// text and the tail.
func (b *wireBody) start(i int) {
	m, err := b.plan.encode(i)
	if err != nil {
		b.failed = err
		return
	}
	b.piece = append(append(b.piece[:0], b.separator(i)...), m.head...)
	b.cur, b.tail = b.piece, m.tail
	switch {
	case m.generated:
		// The text is made into piece once the head in it has been read (more).
		b.text, b.textOn = m.text, !m.text.Done()
	case len(m.literal) > 0:
		b.piece = append(b.piece, m.literal...)
		b.cur = b.piece
	}
	if len(b.tail) == 0 {
		b.tail = nil
	}
}

// separator is what comes before message i.
func (b *wireBody) separator(i int) []byte {
	p := b.plan
	switch {
	case p.api == wireChat && i == 0:
		return openMessages
	case p.api == wireChat:
		return comma
	case i == 0 && p.instructions():
		return nil // the instructions member, or nothing
	case i == 0 || i == 1 && p.instructions() && !p.hasText(0):
		return openInput
	case i == 1 && p.instructions():
		return openInputAfter
	}
	return comma
}

// closing is what comes after the last message.
func (b *wireBody) closing() []byte {
	p := b.plan
	switch {
	case p.api == wireChat && len(p.msgs) == 0:
		return []byte(`"messages":[]`)
	case p.api == wireResponses && len(p.msgs) == 0, len(p.msgs) == 1 && p.instructions() && !p.hasText(0):
		return []byte(`"input":[]`)
	case len(p.msgs) == 1 && p.instructions():
		return []byte(`,"input":[]`)
	}
	return closeArray
}

var (
	openMessages   = []byte(`"messages":[`)
	openInput      = []byte(`"input":[`)
	openInputAfter = []byte(`,"input":[`)
	comma          = []byte(",")
	closeArray     = []byte("]")
)

// instructions reports whether the conversation's first message is the Responses API's
// instructions rather than an input item: a system message (go-openai leaves empty
// instructions out).
func (p *wirePlan) instructions() bool {
	return p.api == wireResponses && len(p.msgs) > 0 && p.msgs[0].role == openai.ChatMessageRoleSystem
}

// hasText reports whether message i has text.
func (p *wirePlan) hasText(i int) bool {
	m := &p.msgs[i]
	return m.content != "" || m.text.words > 0
}

// encodedMessage is one message of a body: the bytes before its text, the text (generated, or
// literal: already escaped), and the bytes after it.
type encodedMessage struct {
	head, tail []byte
	generated  bool
	text       workloads.TextStream
	literal    []byte
}

// size is the length of message i in the body, in bytes: measured the first time and kept in
// the message.
func (p *wirePlan) size(i int) int {
	m := &p.msgs[i]
	if n := m.wire[p.api]; n > 0 {
		return int(n)
	}
	e, err := p.encode(i)
	if err != nil {
		return 0 // the body fails when it reaches the message
	}
	n := len(e.head) + len(e.literal) + len(e.tail)
	if e.generated {
		n += e.text.Len()
	}
	m.wire[p.api] = int32(n)
	return n
}

// encode is message i of the body; its generated text is not made yet.
func (p *wirePlan) encode(i int) (encodedMessage, error) {
	m := &p.msgs[i]
	var e encodedMessage
	hasText := p.hasText(i)
	var err error
	if p.api == wireResponses {
		err = p.encodeItems(&e, i, m, hasText)
	} else {
		cm := openai.ChatCompletionMessage{Role: m.role}
		switch {
		case len(m.calls) > 0 && m.role == openai.ChatMessageRoleTool:
			cm.ToolCallID = m.calls[0].ID
		case len(m.calls) > 0:
			cm.ToolCalls = wireCalls(m.calls)
		}
		if hasText {
			cm.Content = sentinel
		}
		e.head, err = json.Marshal(cm)
	}
	if err != nil {
		return e, fmt.Errorf("write request body: message %d: %w", i, err)
	}
	if !hasText {
		// A Responses item keeps its empty text; a chat message without text has none.
		e.head = bytes.Replace(e.head, sentinelJSON, []byte(`""`), 1)
		return e, nil
	}
	at := bytes.Index(e.head, sentinelJSON)
	if at < 0 {
		return e, errors.New("write request body: a message's encoding lost its text")
	}
	e.head, e.tail = e.head[:at+1], e.head[at+len(sentinelJSON)-1:]
	if m.text.words > 0 {
		e.generated, e.text = true, workloads.NewTextStream(p.seed, p.agent, m.text.round, m.text.part, m.text.words)
		return e, nil
	}
	lit, err := json.Marshal(m.content)
	if err != nil {
		return e, err
	}
	e.literal = lit[1 : len(lit)-1]
	return e, nil
}

// encodeItems encodes message i as the Responses API's input items, or as its instructions
// (see responseRequest, whose shapes these are).
func (p *wirePlan) encodeItems(e *encodedMessage, i int, m *message, hasText bool) error {
	var err error
	switch {
	case i == 0 && p.instructions() && !hasText:
		return nil // go-openai leaves empty instructions out
	case i == 0 && p.instructions():
		e.head, err = json.Marshal(struct {
			Instructions string `json:"instructions"`
		}{sentinel})
		if err == nil {
			e.head = e.head[1 : len(e.head)-1] // a member, not an object
		}
	case m.role == openai.ChatMessageRoleTool:
		var id string
		if len(m.calls) > 0 {
			id = m.calls[0].ID
		}
		e.head, err = json.Marshal(openai.ResponseFunctionCallOutput{Type: "function_call_output", CallID: id, Output: sentinel})
	case m.role == openai.ChatMessageRoleAssistant:
		if hasText || len(m.calls) == 0 {
			e.head, err = json.Marshal(inputMessage{Type: "message", Role: m.role, Content: []inputText{{Type: "output_text", Text: sentinel}}})
		}
		for _, c := range m.calls {
			if err != nil {
				break
			}
			var item []byte
			item, err = json.Marshal(functionCallItem{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: c.Arguments})
			if len(e.head) > 0 {
				e.head = append(e.head, ',')
			}
			e.head = append(e.head, item...)
		}
	default:
		role := m.role
		if role == openai.ChatMessageRoleSystem {
			role = openai.ChatMessageRoleDeveloper
		}
		e.head, err = json.Marshal(inputMessage{Type: "message", Role: role, Content: []inputText{{Type: "input_text", Text: sentinel}}})
	}
	return err
}
