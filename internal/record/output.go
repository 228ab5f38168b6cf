package record

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/agentsim/agentsim/trace"
)

// finished is an ended request on its way to the trace.
type finished struct {
	req     trace.Request
	content *contentLine // nil unless text is kept
	// awaits says the reply called tools: the line waits for the session's next request,
	// which says whether it carries their results and so gives tool_s.
	awaits bool
}

// contentLine is one line of the content file (--keep-content): the text the trace line
// (session, seq) stands for.
type contentLine struct {
	Session  string            `json:"session"`
	Seq      int               `json:"seq"`
	Messages []json.RawMessage `json:"messages,omitempty"`
	Prompt   json.RawMessage   `json:"prompt,omitempty"`
	// Instructions and Input are a Responses request's, as sent.
	Instructions json.RawMessage `json:"instructions,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	Reply        string          `json:"reply"`
	// ToolCalls are the reply's tool calls, as name and arguments.
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
}

// output writes ended requests to the trace, each session's in seq order, flushing each line
// as it is written so that a killed proxy loses only the requests in flight and the replies
// whose tools are running. A request that ends before the previous one of its session
// (possible only by a hair: the previous one's lane is released before its handler returns)
// waits for it. A request whose reply called tools is held until the session's next request
// arrives and says whether it carries their results (tool_s), or until the end.
type output struct {
	mu      sync.Mutex
	w       *trace.Writer
	content *json.Encoder
	contW   io.Writer
	log     io.Writer
	next    map[string]int              // per session: the seq to write next
	waiting map[string]map[int]finished // per session: ended requests waiting for an earlier seq
	held    map[string]finished         // per session: the request whose tool time is not known yet
	early   map[string]toolTime         // per session: a tool time known before its request ended
	n       int                         // lines written
	first   error                       // the first error writing the trace or the content
}

func newOutput(tw io.Writer, content io.Writer, h trace.Header, log io.Writer) (*output, error) {
	w, err := trace.NewWriter(tw, h)
	if err != nil {
		return nil, err
	}
	o := &output{w: w, log: log, contW: content, next: map[string]int{}, waiting: map[string]map[int]finished{},
		held: map[string]finished{}, early: map[string]toolTime{}}
	if content != nil {
		o.content = json.NewEncoder(content)
		o.content.SetEscapeHTML(false)
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return o, nil
}

// add writes f, and whatever of its session was waiting for it, or keeps f until the
// session's earlier requests are written.
func (o *output) add(f finished) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := f.req.Session
	if t, ok := o.early[s]; ok && f.awaits && t.seq == f.req.Seq {
		delete(o.early, s)
		f.awaits, f.req.ToolS = false, t.toolS
	}
	if f.req.Seq != o.next[s] {
		if o.waiting[s] == nil {
			o.waiting[s] = map[int]finished{}
		}
		o.waiting[s][f.req.Seq] = f
		return
	}
	o.drain(s, f)
}

// resolve gives the tool time of request seq of session s, whose reply called tools: nil
// when the session's next request does not carry their results. The held line, and what
// waited behind it, is written.
func (o *output) resolve(s string, seq int, toolS *float64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, ok := o.held[s]
	if !ok || f.req.Seq != seq {
		o.early[s] = toolTime{seq: seq, toolS: toolS}
		return
	}
	delete(o.held, s)
	f.awaits, f.req.ToolS = false, toolS
	o.drain(s, f)
}

// drain writes f, the session's next line, and the lines waiting behind it, up to the first
// that awaits its tool time.
func (o *output) drain(s string, f finished) {
	for ok := true; ok; f, ok = o.waiting[s][o.next[s]] {
		delete(o.waiting[s], f.req.Seq)
		if f.awaits {
			o.held[s] = f
			break
		}
		o.write(f)
		o.next[s]++
	}
	if len(o.waiting[s]) == 0 {
		delete(o.waiting, s)
	}
}

// write writes one line and flushes it.
func (o *output) write(f finished) {
	err := o.w.Write(f.req)
	if err == nil {
		err = o.w.Flush()
		o.n++
	}
	if err == nil && o.content != nil && f.content != nil {
		err = o.content.Encode(f.content)
	}
	if err != nil {
		fmt.Fprintf(o.log, "agentsim record: %v\n", err)
		if o.first == nil {
			o.first = err
		}
	}
}

// written returns the number of trace lines written.
func (o *output) written() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n
}

func (o *output) err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.first
}

// close writes the held lines, without tool_s (the session sent nothing more), then what
// still waits — nothing, unless a request's handler never ended — and flushes.
func (o *output) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range slices.Sorted(maps.Keys(o.held)) {
		f := o.held[s]
		delete(o.held, s)
		f.awaits = false
		o.drain(s, f)
	}
	for s, w := range o.waiting {
		fmt.Fprintf(o.log, "agentsim record: session %q: %d requests not written: an earlier request of the session never ended\n", s, len(w))
	}
	if err := o.w.Close(); err != nil && o.first == nil {
		o.first = err
	}
	return o.first
}

// seen identifies x for an observer.
func (x *exchange) seen() Seen {
	return Seen{ID: x.id, Session: x.asg.lane.name, Seq: x.asg.seq, SentS: x.sendS,
		PromptTokens: (x.promptB + 3) / 4, MaxTokens: x.body.maxTokens()}
}

// content returns x's text for the content file, or nil when text is not kept.
func (x *exchange) content() *contentLine {
	if x.p.o.Content == nil {
		return nil
	}
	c := &contentLine{Session: x.asg.lane.name, Seq: x.asg.seq, Reply: x.reply.String(), ToolCalls: x.toolCalls()}
	if x.body.whole {
		var raw struct {
			Messages []json.RawMessage `json:"messages"`
			Prompt   json.RawMessage   `json:"prompt"`
		}
		_ = json.Unmarshal(x.body.raw, &raw)
		c.Messages, c.Prompt = raw.Messages, raw.Prompt
		c.Instructions, c.Input = x.body.resp.Instructions, x.body.resp.Input
	}
	return c
}
