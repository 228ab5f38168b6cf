package engine

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// builtinFS holds the built-in profiles, one YAML file each, named after the profile.
//
//go:embed profiles/*.yaml
var builtinFS embed.FS

// builtin returns the YAML of the named built-in profile.
func builtin(name string) ([]byte, bool) {
	data, err := builtinFS.ReadFile("profiles/" + name + ".yaml")
	return data, err == nil
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string {
	entries, _ := fs.ReadDir(builtinFS, "profiles")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(names)
	return names
}

// DefaultProfile is the name of the profile used when none is given.
const DefaultProfile = "dsv4-pd"

// DSV4PD is the default profile, calibrated to the incident's DeepSeek-V4-Flash
// prefill/decode deployment: profiles/dsv4-pd.yaml documents every figure and its source, and
// docs/engine.md §5 and §6 the calibration. In short:
//
//   - decode: 9.2 ms + 1.09 ms per running request + 10 ns per KV token — 806 tok/s at 64
//     concurrent and 835 tok/s at 96 with ~200-token prompts (the incident: 812 and 845);
//   - prefill: 20 ms + 80 µs per uncached token + 1 ns per token × context token, chunks of
//     8 192 tokens;
//   - KV transfer: a 70 ms handshake served one request at a time (+ 5 ns per token), then
//     1.1 s until the decode engine has the KV;
//   - streaming as SGLang: nothing is sent before the first token, one token per chunk;
//
// which makes 16 × 128 tokens with ~200-token prompts finish in ≈ 5.3–5.45 s with lat_min
// ≈ 3.7–4.2 s and lat_mean ≈ 4.9–5.0 s (the incident: 5.4 s, 3.9 s, 5.1 s).
func DSV4PD() *Profile { return mustBuiltin(DefaultProfile) }

// Ideal is the profile for testing a harness alone: every decode step takes 20 ms whatever
// the load, slots and KV are effectively unlimited, prefill and transfer take no time.
func Ideal() *Profile { return mustBuiltin("ideal") }

// mustBuiltin parses a built-in profile; the built-ins are checked by the tests, so an error
// is a bug in the program.
func mustBuiltin(name string) *Profile {
	p, err := LookupProfile(name)
	if err != nil {
		panic(err)
	}
	return p
}

// ErrUnknownProfile is wrapped by the errors of LookupProfile and LoadProfile for a name that
// is neither a built-in profile nor a file.
var ErrUnknownProfile = errors.New("unknown profile")

// unknownProfile says that name is no built-in profile (nor, for LoadProfile, a file).
func unknownProfile(name string) error {
	return fmt.Errorf("%w %q: want one of %s, or a profile file", ErrUnknownProfile, name, strings.Join(ProfileNames(), ", "))
}

// LookupProfile returns a fresh copy of the named built-in profile.
func LookupProfile(name string) (*Profile, error) {
	data, ok := builtin(name)
	if !ok {
		return nil, unknownProfile(name)
	}
	return ParseProfile(data, "profile "+name)
}

// LoadProfile returns the built-in profile of that name or, failing that, the profile in the
// YAML file at that path (see ParseProfile). Its errors name the profile or the file.
func LoadProfile(nameOrPath string) (*Profile, error) {
	if _, ok := builtin(nameOrPath); ok {
		return LookupProfile(nameOrPath)
	}
	data, err := os.ReadFile(nameOrPath)
	if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(nameOrPath, `/\.`) {
		return nil, unknownProfile(nameOrPath)
	}
	if err != nil {
		return nil, fmt.Errorf("profile file %s: %w", nameOrPath, err)
	}
	p, err := ParseProfile(data, "profile file "+nameOrPath)
	if err != nil {
		return nil, err
	}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(nameOrPath), filepath.Ext(nameOrPath))
	}
	return p, nil
}

// profileFile is a profile file: the profile's keys, and base, the built-in profile whose
// values the keys it does not set keep.
type profileFile struct {
	Base    string `yaml:"base"`
	Profile `yaml:",inline"`
}

// ParseProfile reads a profile from YAML. A file with `base: NAME` starts from that built-in
// profile and changes only the keys it sets; without base, every key must be set (a missing
// one is zero, and Validate says which zeros are not allowed). Keys are strict: an unknown
// key is an error. It reports every problem at once, one per line, each prefixed with source.
func ParseProfile(data []byte, source string) (*Profile, error) {
	baseName, err := profileBase(data, source)
	if err != nil {
		return nil, err
	}
	pf := profileFile{}
	if baseName != "" {
		base, ok := builtin(baseName)
		if !ok {
			return nil, fmt.Errorf("%s: base: %q is not allowed: want one of %s", source, baseName, strings.Join(ProfileNames(), ", "))
		}
		if err := strictDecode(base, &pf); err != nil {
			return nil, fmt.Errorf("profile %s: %w", baseName, err)
		}
	}
	var errs []error
	if err := strictDecode(data, &pf); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return nil, fmt.Errorf("%s: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		keys := keysByLine(data)
		for _, msg := range te.Errors {
			errs = append(errs, fmt.Errorf("%s: %s", source, keyMessage(msg, keys)))
		}
	}
	p := pf.Profile
	for _, e := range p.problems() {
		errs = append(errs, fmt.Errorf("%s: %w", source, e))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &p, nil
}

// profileBase reads a profile file's top level: a mapping, and its base key ("" for none). A
// file that is no mapping is named by its kind and size, never its content: a file given by
// mistake may hold a secret.
func profileBase(data []byte, source string) (string, error) {
	var root any
	if err := yaml.Unmarshal(data, &root); err != nil {
		return "", fmt.Errorf("%s: not YAML: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if root == nil {
		return "", nil
	}
	m, ok := root.(map[string]any)
	if !ok {
		kind := "a YAML scalar"
		switch root.(type) {
		case string:
			kind = "text (a YAML string)"
		case []any:
			kind = "a YAML list"
		}
		return "", fmt.Errorf("%s: the file is %s (%d bytes), not a mapping: want profile keys such as base: dsv4-pd", source, kind, len(data))
	}
	switch b := m["base"].(type) {
	case nil:
		return "", nil
	case string:
		return b, nil
	}
	return "", fmt.Errorf("%s: base: want the name of a built-in profile (%s)", source, strings.Join(ProfileNames(), ", "))
}

// strictDecode decodes YAML onto v, refusing keys v has no field for.
func strictDecode(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

var (
	unknownField = regexp.MustCompile(`field (\S+) not found in type (\S+)`)
	cannotDecode = regexp.MustCompile("^line (\\d+): cannot unmarshal !!\\w+ `(.*)` into (\\S+)$")
)

// keyMessage rewrites a YAML decoding error in the profile's terms, naming the key from
// keys, the top-level key on each line.
func keyMessage(msg string, keys map[int]string) string {
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		key, want := m[1], profileKeys()
		if m[2] == "engine.Agent" {
			key, want = "agent."+m[1], agentKeys()
		}
		return unknownField.ReplaceAllString(msg, fmt.Sprintf("unknown key %q: want one of %s", key, strings.Join(want, ", ")))
	}
	if m := cannotDecode.FindStringSubmatch(msg); m != nil {
		want := "a " + m[3]
		switch m[3] {
		case "time.Duration":
			want = "a duration in Go syntax with its unit, like 20ms"
		case "int":
			want = "an integer"
		case "float64":
			want = "a number"
		}
		line, _ := strconv.Atoi(m[1])
		return fmt.Sprintf("line %s: %s: %s is not allowed: want %s", m[1], keys[line], m[2], want)
	}
	return msg
}

// keysByLine maps each line of a YAML mapping to the top-level key it sets.
func keysByLine(data []byte) map[int]string {
	var doc yaml.Node
	keys := map[int]string{}
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return keys
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		keys[m.Content[i].Line] = m.Content[i].Value
		keys[m.Content[i+1].Line] = m.Content[i].Value
	}
	return keys
}

// profileKeys lists the keys of a profile file, in file order.
func profileKeys() []string {
	keys := []string{"base"}
	for _, k := range profileKeyDocs {
		keys = append(keys, k.key)
	}
	return keys
}

// agentKeys lists the keys of a profile's agent section, in file order.
func agentKeys() []string {
	keys := make([]string, len(agentKeyDocs))
	for i, k := range agentKeyDocs {
		keys[i] = k.key
	}
	return keys
}

// commentAgent gives each key of the agent section's YAML node its meaning as a line comment.
func commentAgent(v *yaml.Node) {
	docs := map[string]string{}
	for _, k := range agentKeyDocs {
		docs[k.key] = k.doc
	}
	for j := 0; j+1 < len(v.Content); j += 2 {
		v.Content[j].LineComment = docs[v.Content[j].Value]
	}
}

// Validate reports every parameter out of range at once, one per line, each naming the key,
// the value and what is allowed. Numbers must be finite: NaN and infinities are refused.
func (p *Profile) Validate() error {
	if err := p.problems().err(); err != nil {
		return fmt.Errorf("profile %s: %w", p.Name, err)
	}
	return nil
}

// problems lists what Validate reports.
func (p *Profile) problems() problems {
	var ps problems
	if p.Name == "" {
		ps = append(ps, errors.New(`name: "" is not allowed: want the profile's name`))
	}
	if p.Model == "" {
		ps = append(ps, errors.New(`model: "" is not allowed: want the model name /v1/models lists`))
	}
	ps.oneOf("engine", string(p.engine()), string(EngineDisaggregated), string(EngineColocatedMixed), string(EngineColocatedAlternating), string(EngineColocatedParallel))
	if p.engine() == EngineColocatedMixed {
		ps.atLeast("step_token_budget", p.StepTokenBudget, 1)
	} else {
		ps.atLeast("step_token_budget", p.StepTokenBudget, 0)
	}
	ps.nonNegative("bootstrap_timeout", p.BootstrapTimeout)
	ps.nonNegative("waiting_timeout", p.WaitingTimeout)
	ps.nonNegative("abort_delay", p.AbortDelay)
	if p.engine() != EngineDisaggregated {
		for _, k := range []struct {
			key   string
			set   bool
			value any
		}{
			{"bootstrap_timeout", p.BootstrapTimeout != 0, p.BootstrapTimeout},
			{"waiting_timeout", p.WaitingTimeout != 0, p.WaitingTimeout},
			{"decode_ignores_disconnect", p.DecodeIgnoresDisconnect, p.DecodeIgnoresDisconnect},
		} {
			if k.set {
				ps = append(ps, fmt.Errorf("%s: %v is not allowed with engine %s: want it 0 or false (it applies to engine disaggregated only)", k.key, k.value, p.engine()))
			}
		}
	}
	ps.oneOf("first_byte", string(p.firstByte()), string(FirstByteAtToken), string(FirstByteHeaders), string(FirstByteAtAdmission))
	ps.atLeast("stream_interval", p.StreamInterval, 0)
	ps.atLeast("stream_coalesce_tokens", p.StreamCoalesceTokens, 0)
	ps.nonNegative("request_overhead", p.RequestOverhead)
	ps.nonNegative("request_overhead_per_token", p.RequestOverheadPerToken)
	ps.nonNegative("prefill_base", p.PrefillBase)
	ps.nonNegative("prefill_per_token", p.PrefillPerToken)
	ps.finite("prefill_attn_per_token2_ns", p.PrefillAttnPerToken2Ns)
	ps.finite("prefill_attn_pool_ns", p.PrefillAttnPoolNs)
	if k := p.engine(); p.KVIdleSlots && (k == EngineColocatedParallel || k == EngineDisaggregated) {
		ps = append(ps, fmt.Errorf("kv_idle_slots: true is not allowed with engine %s: want false (only %s and %s share a pool between prefill and decode)", k, EngineColocatedMixed, EngineColocatedAlternating))
	}
	ps.finite("prefill_attn_idle_ns", p.PrefillAttnIdleNs)
	if p.PrefillAttnIdleNs != 0 && !p.KVIdleSlots {
		ps = append(ps, fmt.Errorf("prefill_attn_idle_ns: %g is read only with kv_idle_slots: true: want 0, or kv_idle_slots: true", p.PrefillAttnIdleNs))
	}
	ps.nonNegative("launch_per_idle_token", p.LaunchPerIdleToken)
	if k := p.engine(); p.LaunchPerIdleToken != 0 && (k == EngineColocatedParallel || k == EngineDisaggregated) {
		ps = append(ps, fmt.Errorf("launch_per_idle_token: %v is not allowed with engine %s: want 0 (only %s and %s launch requests from the loop that steps them)", p.LaunchPerIdleToken, k, EngineColocatedMixed, EngineColocatedAlternating))
	}
	if p.engine() == EngineColocatedParallel && p.PrefillAttnPoolNs != 0 {
		ps = append(ps, fmt.Errorf("prefill_attn_pool_ns: %v is not allowed with engine %s: want 0 (its prefills share nothing, so none reads another request's KV)", p.PrefillAttnPoolNs, p.engine()))
	}
	ps.atLeast("prefill_chunk_tokens", p.PrefillChunkTokens, 1)
	ps.atLeast("prefix_cache_tokens", p.PrefixCacheTokens, 0)
	ps.nonNegative("transfer_serial", p.TransferSerial)
	ps.finite("transfer_per_token_ns", p.TransferPerTokenNs)
	ps.nonNegative("transfer_latency", p.TransferLatency)
	ps.positive("decode_base", p.DecodeBase)
	ps.nonNegative("decode_per_seq", p.DecodePerSeq)
	ps.finite("decode_per_kv_token_ns", p.DecodePerKVTokenNs)
	ps.finite("decode_per_seq_kv_token_ns", p.DecodePerSeqKVTokenNs)
	ps.nonNegative("decode_multi_seq", p.DecodeMultiSeq)
	ps.oneOf("kv_full", string(p.kvFull()), string(KVFullRetract), string(KVFullFail))
	if p.TokenizerRatio != 0 {
		ps.between("tokenizer_ratio", p.TokenizerRatio, 0.1, 10)
	}
	ps.atLeast("max_running", p.MaxRunning, 1)
	ps.atLeast("decode_log_interval", p.DecodeLogInterval, 1)
	ps.between("step_jitter_sigma", p.StepJitterSigma, 0, 2)
	ps.fraction("slow_step_probability", p.SlowStepProbability)
	if p.SlowStepProbability > 0 || p.SlowStepFactor != 0 {
		ps.between("slow_step_factor", p.SlowStepFactor, 1, 1000)
	}
	ps.atLeast("max_context_tokens", p.MaxContextTokens, 2)
	if p.KVCapacityTokens < p.MaxContextTokens {
		ps = append(ps, fmt.Errorf("kv_capacity_tokens: %d is not allowed: want at least max_context_tokens (%d), so one full context fits",
			p.KVCapacityTokens, p.MaxContextTokens))
	}
	if _, ok := p.Efforts[""]; !ok {
		ps = append(ps, errors.New(`efforts: the output length of requests without reasoning_effort ("") is missing: want efforts."" {min, max, reasoning_fraction}`))
	}
	efforts := make([]string, 0, len(p.Efforts))
	for e := range p.Efforts {
		efforts = append(efforts, e)
	}
	slices.Sort(efforts)
	for _, e := range efforts {
		l := p.Efforts[e]
		key := fmt.Sprintf("efforts.%q", e)
		ps.atLeast(key+".min", l.Min, 1)
		ps.atLeast(key+".max", l.Max, max(l.Min, 1))
		if !(l.ReasoningFraction >= 0 && l.ReasoningFraction < 1) {
			ps = append(ps, fmt.Errorf("%s.reasoning_fraction: %g is not allowed: want a fraction from 0 to below 1", key, l.ReasoningFraction))
		}
	}
	return append(ps, p.Agent.problems()...)
}

// engine is Engine with its default.
func (p *Profile) engine() EngineKind {
	if p.Engine == "" {
		return EngineDisaggregated
	}
	return p.Engine
}

// EngineMode returns how prefill and decode share the hardware: Engine, or
// EngineDisaggregated when it is unset.
func (p *Profile) EngineMode() EngineKind { return p.engine() }

// kvFull is KVFull with its default.
func (p *Profile) kvFull() KVFull {
	if p.KVFull == "" {
		return KVFullRetract
	}
	return p.KVFull
}

// firstByte is FirstByte with its default.
func (p *Profile) firstByte() FirstByte {
	if p.FirstByte == "" {
		return FirstByteAtAdmission
	}
	return p.FirstByte
}

// FirstByteMode returns when a stream's first bytes go out: FirstByte, or
// FirstByteAtAdmission when it is unset.
func (p *Profile) FirstByteMode() FirstByte { return p.firstByte() }

// ChunkTokens returns how many tokens a stream chunk carries: StreamInterval, at least 1.
func (p *Profile) ChunkTokens() int { return max(p.StreamInterval, 1) }

// CoalesceTokens returns the most tokens a chunk carries when the writer has fallen behind:
// StreamCoalesceTokens, at least ChunkTokens.
func (p *Profile) CoalesceTokens() int { return max(p.StreamCoalesceTokens, p.ChunkTokens()) }

// profileKeyDocs says, for every key of a profile file in file order, its unit and meaning:
// the line comments of YAML.
var profileKeyDocs = []struct{ key, doc string }{
	{"name", "the profile's name, as --profile takes it"},
	{"model", "model name /v1/models lists"},
	{"description", "the stack the profile models"},
	{"engine", "disaggregated (prefill and decode engines, KV transfer), colocated-mixed (prefill chunks ride in decode steps, vLLM V1), colocated-alternating (prefill batches pause decoding, SGLang), colocated-parallel (each request prefills on its own, llm-d-inference-sim)"},
	{"step_token_budget", "colocated-mixed: most tokens per step, decodes plus prefill chunks (vLLM max_num_batched_tokens); 0 otherwise"},
	{"first_byte", "when the HTTP head and role chunk go out: first-token, headers (head at admission, role chunk with the first token), admission"},
	{"stream_interval", "tokens per stream chunk (0: 1)"},
	{"stream_coalesce_tokens", "most tokens per chunk when the writer falls behind (≤ stream_interval: never coalesce)"},
	{"request_overhead", "arrival → the scheduler takes the request (HTTP, chat template, tokenizing; holds nothing), simulated time"},
	{"request_overhead_per_token", "that work's cost per prompt token, cached or not, simulated time"},
	{"prefill_base", "fixed cost of a prefill step, simulated time"},
	{"prefill_per_token", "cost per uncached prompt token, simulated time"},
	{"prefill_attn_per_token2_ns", "ns per (token computed × context token before it)"},
	{"prefill_attn_pool_ns", "ns per (token computed × KV token other requests hold in a unified pool; 0: a paged KV)"},
	{"kv_idle_slots", "a finished request's KV stays in the unified pool, read at prefill_attn_idle_ns, until its slot takes another request (llama-server)"},
	{"prefill_attn_idle_ns", "with kv_idle_slots: ns per (token computed × KV token idle slots hold; 0: prefill_attn_pool_ns)"},
	{"launch_per_idle_token", "the scheduler's work when it takes a new request, per token finished requests' slots hold (llama-server saving idle slots); no step runs meanwhile, simulated time"},
	{"prefill_chunk_tokens", "most prompt tokens one prefill step computes"},
	{"prefix_cache_tokens", "prefix cache capacity, tokens"},
	{"transfer_serial", "KV transfer thread's fixed cost per request, simulated time"},
	{"transfer_per_token_ns", "KV transfer thread's cost per prompt token, ns"},
	{"transfer_latency", "end of handshake → KV in the decode engine, simulated time"},
	{"decode_base", "fixed cost of a decode step, simulated time"},
	{"decode_per_seq", "cost per running request in a decode step, simulated time"},
	{"decode_per_kv_token_ns", "cost per KV token in the batch, ns"},
	{"decode_per_seq_kv_token_ns", "cost per running request × KV token in the batch, ns (a unified KV every sequence reads; 0: none)"},
	{"decode_multi_seq", "added to a decode step of two or more requests (a CPU backend's batched kernels), simulated time"},
	{"max_running", "decode batch limit, requests"},
	{"kv_capacity_tokens", "decode KV capacity, tokens"},
	{"kv_full", "when the running KV outgrows the capacity: retract (newest requeued, recomputed) or fail (every running request fails mid-stream, llama.cpp)"},
	{"decode_log_interval", "decode steps between refreshes of the SGLang decode gauges"},
	{"step_jitter_sigma", "sigma of the lognormal decode-step multiplier (mean 1; 0: none)"},
	{"slow_step_probability", "chance a decode step is slow, 0 to 1"},
	{"slow_step_factor", "a slow step's duration multiplier, ≥ 1"},
	{"bootstrap_timeout", "disaggregated: longest wait for decode to reserve a request's KV before it is aborted, simulated time (0: never)"},
	{"waiting_timeout", "disaggregated: longest time from KV reservation to KV in decode before abort, simulated time (0: never)"},
	{"abort_delay", "client disconnect → slot and KV freed, simulated time"},
	{"decode_ignores_disconnect", "disaggregated: a request already in decode runs on to its end after its client goes"},
	{"tokenizer_ratio", "server tokens per token of agentsim's estimate, for prompts (0: 1)"},
	{"max_context_tokens", "longest prompt plus output, tokens"},
	{"efforts", "output length per reasoning_effort: uniform in [min, max] tokens, reasoning_fraction of it reasoning"},
	{"agent", "the model in a tool-calling loop, for requests that offer tools (docs/engine.md §8)"},
}

// YAML renders the profile resolved, as a profile file: every key in file order with its
// unit as a comment, durations in Go syntax. ParseProfile reads the result back.
func (p *Profile) YAML() ([]byte, error) {
	var root yaml.Node
	if err := root.Encode(p); err != nil {
		return nil, fmt.Errorf("encode profile %s: %w", p.Name, err)
	}
	docs := map[string]string{}
	for _, k := range profileKeyDocs {
		docs[k.key] = k.doc
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		k.LineComment = docs[k.Value]
		switch k.Value {
		case "efforts":
			k.LineComment, k.HeadComment = "", docs[k.Value]
			for j := 1; j < len(v.Content); j += 2 {
				v.Content[j].Style = yaml.FlowStyle
			}
		case "agent":
			k.LineComment, k.HeadComment = "", docs[k.Value]
			commentAgent(v)
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, fmt.Errorf("encode profile %s: %w", p.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode profile %s: %w", p.Name, err)
	}
	return buf.Bytes(), nil
}
