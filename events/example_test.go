package events_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentsim/agentsim/events"
)

// Read parses events.jsonl (and, with Sample, samples.jsonl). A last line cut short, as a killed run leaves it, is ignored.
func ExampleRead() {
	const jsonl = `{"t_s":12.5,"wall":"2026-11-30T02:35:42Z","event":"request_sent","agent":3,"round":2,"request":"a3-r2-0","context_tokens":21400,"max_tokens":32768}
{"t_s":14.1,"wall":"2026-11-30T02:35:43Z","event":"first_reasoning","agent":3,"round":2,"request":"a3-r2-0"}
{"t_s":186.9,"wall":"2026-11-30T02:35:52Z","event":"done","agent":3,"round":2,"request":"a3-r2-0","latency_s":174.4,"ttft_s":1.6,"completion_tokens":3812}
{"t_s":187.0,"wall":"2026-11-30T02:35:52Z","event":"rel`
	evs, err := events.Read[events.Event](strings.NewReader(jsonl))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range evs {
		fmt.Printf("t=%.1fs agent %d %s %s terminal=%t\n", e.TS, e.Agent, e.Kind, e.Request, e.Kind.Terminal())
	}
	done := evs[len(evs)-1]
	fmt.Printf("latency %.1f s, TTFT %.1f s, %d tokens\n", done.LatencyS, done.TTFTS, done.CompletionTokens)
	// Output:
	// t=12.5s agent 3 request_sent a3-r2-0 terminal=false
	// t=14.1s agent 3 first_reasoning a3-r2-0 terminal=false
	// t=186.9s agent 3 done a3-r2-0 terminal=true
	// latency 174.4 s, TTFT 1.6 s, 3812 tokens
}

// A malformed line other than the last is an error naming its line number.
func ExampleRead_malformed() {
	_, err := events.Read[events.Event](strings.NewReader("{\"event\":\"run_start\",\"agent\":-1}\nnot json\n{}\n"))
	fmt.Println(err)
	// Output:
	// line 2: invalid character 'o' in literal null (expecting 'u')
}

// Kind.Terminal tells the four events that end a request: each request_sent has exactly one.
func ExampleKind_Terminal() {
	for _, k := range []events.Kind{events.RequestSent, events.Done, events.Error, events.Timeout, events.Cancelled, events.Retry} {
		fmt.Println(k, k.Terminal())
	}
	// Output:
	// request_sent false
	// done true
	// error true
	// timeout true
	// cancelled true
	// retry false
}

// A Sample is one line of samples.jsonl; every time in it is simulated seconds.
func ExampleSample() {
	s := events.Sample{
		TS:             661.5,
		Server:         map[string]float64{"decode_running": 0, "prefill_inflight": 0},
		Agents:         map[events.State]int{events.StatePacerWait: 14, events.StateRequesting: 16},
		InFlight:       16,
		OldestSilenceS: 406,
		Streams:        []events.Stream{{Request: "a19-r2-0", Agent: 19, SentAgoS: 449, SinceLastByteS: 406, Chunks: 581, Permit: 36}},
	}
	b, err := json.Marshal(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output:
	// {"t_s":661.5,"wall":"","server":{"decode_running":0,"prefill_inflight":0},"agents":{"pacer_wait":14,"requesting":16},"in_flight":16,"oldest_silence_s":406,"tokens_out":0,"chunks_in":0,"streams":[{"request":"a19-r2-0","agent":19,"sent_ago_s":449,"since_last_byte_s":406,"chunks":581,"permit":36}]}
}
