package scrape

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agentsim/agentsim/clock"
	"github.com/agentsim/agentsim/events"
	"github.com/agentsim/agentsim/internal/redact"
)

// Reading is one scrape of every URL, mapped to canonical gauges.
type Reading struct {
	// Gauges holds the canonical gauges that were found.
	Gauges map[string]float64
	// Errors lists URLs that could not be read this time, with why.
	Errors []string
}

// Scraper samples one or more /metrics URLs (a prefill/decode deployment has one per engine).
// It remembers which metric each canonical gauge came from and the previous value of counters
// whose rate it reports. Safe for concurrent use.
type Scraper struct {
	urls   []string
	client *http.Client
	clk    *clock.Clock
	keys   map[string]string // url → the bearer token sent with it (see Authorize)

	mu      sync.Mutex
	found   map[string]string // canonical → metric name it was read from
	failed  map[string]string // url → why it could not be read (last failure)
	counter map[string]counterPoint
	stream  map[string]*streamSeen // url → its stream chunk metrics (see Stream)
}

type counterPoint struct {
	value float64
	at    time.Time
}

// New returns a Scraper for urls using client (nil: a client with a 5 s timeout).
func New(urls []string, client *http.Client, clk *clock.Clock) *Scraper {
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	return &Scraper{urls: urls, client: client, clk: clk,
		found: map[string]string{}, failed: map[string]string{}, counter: map[string]counterPoint{},
		stream: map[string]*streamSeen{}, keys: map[string]string{}}
}

// Authorize sends key as a bearer token with the scrapes of the URLs on server's own scheme,
// host and port (a server started with an API key, as llama-server --api-key, refuses its
// /metrics without it), and with no other: a /metrics URL on another host belongs to someone
// else (an exporter, a router, another engine), and the server's key is not theirs to see. An
// empty key, or a server URL that does not parse, authorizes nothing. It returns s, and is
// called before the first Scrape.
func (s *Scraper) Authorize(key, server string) *Scraper {
	if key == "" {
		return s
	}
	for _, u := range s.urls {
		if SameOrigin(u, server) {
			s.keys[u] = key
		}
	}
	return s
}

// SameOrigin reports whether the URLs a and b have the same scheme, host and port (a missing
// port is the scheme's default), so that a credential for one may go to the other.
func SameOrigin(a, b string) bool {
	ua, errA := neturl.Parse(a)
	ub, errB := neturl.Parse(b)
	if errA != nil || errB != nil || ua.Host == "" {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) &&
		port(ua) == port(ub)
}

// port is u's port, or its scheme's default.
func port(u *neturl.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// Scrape reads every URL once. A URL that fails is reported in Reading.Errors; the others still
// count. With several URLs, a gauge is read from the first URL that has it.
func (s *Scraper) Scrape(ctx context.Context) Reading {
	out := Reading{Gauges: map[string]float64{}}
	for _, u := range s.urls {
		families, err := s.fetch(ctx, u)
		if err != nil {
			// Every file a failure reaches (samples.jsonl, results.json, record.json)
			// takes it from here, so the URL's credentials are masked once, here.
			why := redact.Text(err.Error())
			out.Errors = append(out.Errors, why)
			s.mu.Lock()
			s.failed[u] = why
			s.mu.Unlock()
			continue
		}
		s.mu.Lock()
		delete(s.failed, u)
		s.mu.Unlock()
		s.mapFamilies(u, families, out.Gauges)
		s.noteStream(u, families)
	}
	return out
}

func (s *Scraper) fetch(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	req.Header.Set("Accept", accept)
	if key := s.keys[url]; key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if timedOut(ctx, err) {
			return nil, fmt.Errorf("GET %s%s", url, timedOutSuffix)
		}
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("GET %s → %d", url, resp.StatusCode)
	}
	families, err := parse(resp, io.LimitReader(resp.Body, 32<<20))
	if err != nil && timedOut(ctx, err) {
		return nil, fmt.Errorf("GET %s%s", url, timedOutSuffix)
	}
	if err != nil {
		return nil, fmt.Errorf("GET %s: parse metrics: %w", url, err)
	}
	return families, nil
}

// accept asks for the delimited protobuf exposition, which a Go exporter (agentsim's
// simulator) encodes and this scraper decodes several times faster than text, and for text
// from every other server (vLLM's and SGLang's exporters answer text whatever is asked).
const accept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7," +
	"text/plain;version=0.0.4;q=0.3,*/*;q=0.1"

// parse decodes a /metrics response body: delimited protobuf when the server answered so,
// text otherwise.
func parse(resp *http.Response, body io.Reader) (map[string]*dto.MetricFamily, error) {
	if expfmt.ResponseFormat(resp.Header).FormatType() != expfmt.TypeProtoDelim {
		parser := expfmt.NewTextParser(model.UTF8Validation)
		return parser.TextToMetricFamilies(body)
	}
	families := map[string]*dto.MetricFamily{}
	dec := expfmt.NewDecoder(body, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); err == io.EOF {
			return families, nil
		} else if err != nil {
			return nil, err
		}
		families[mf.GetName()] = mf
	}
}

// timedOutSuffix ends the error of a scrape that got no answer in time.
const timedOutSuffix = ": timed out"

// TimedOut reports whether msg, one of Reading.Errors (and of samples.jsonl's
// server_errors), is a /metrics that did not answer in time — a frozen server's mark.
func TimedOut(msg string) bool { return strings.HasSuffix(msg, timedOutSuffix) }

// timedOut reports whether err ended a scrape because its time ran out.
func timedOut(ctx context.Context, err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded ||
		(errors.As(err, &ne) && ne.Timeout())
}

// mapFamilies fills canonical gauges not yet set from one URL's families. A counter whose
// rate is the gauge counts as found from its first sight, though its first rate comes only
// with the next scrape.
func (s *Scraper) mapFamilies(url string, families map[string]*dto.MetricFamily, into map[string]float64) {
	for _, name := range events.Gauges {
		if _, done := into[name]; done {
			continue
		}
		for _, src := range sources[name] {
			v, metric, ok := s.read(url, families, src)
			if metric == "" {
				continue
			}
			s.mu.Lock()
			s.found[name] = metric
			s.mu.Unlock()
			if ok {
				into[name] = v
			}
			break
		}
	}
}

// Source names the metric the canonical gauge name was read from ("rate(vllm:…)"), or "" when
// it has not been found.
func (s *Scraper) Source(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.found[name]
}

// read evaluates one source against a URL's families: the value and whether there is one yet,
// and the metric it comes from ("" when the URL has none of the source's families).
func (s *Scraper) read(url string, families map[string]*dto.MetricFamily, src source) (float64, string, bool) {
	var sum float64
	found := false
	for _, n := range src.names {
		mf, ok := families[n]
		if !ok {
			continue
		}
		if v, ok := familyValue(mf, src.engine); ok {
			sum += v
			found = true
		}
	}
	if !found {
		return 0, "", false
	}
	metric := strings.Join(src.names, "+")
	if !src.rate {
		return sum, metric, true
	}
	key, now := url+" "+metric, s.clk.Now()
	s.mu.Lock()
	prev, seen := s.counter[key]
	s.counter[key] = counterPoint{value: sum, at: now}
	s.mu.Unlock()
	dt := now.Sub(prev.at).Seconds()
	metric = "rate(" + metric + ")"
	if !seen || dt <= 0 || sum < prev.value {
		return 0, metric, false
	}
	return (sum - prev.value) / dt, metric, true
}

// Unavailable reports whether line, a Found line (results.json's server.metrics), says no
// /metrics URL could be read, so no gauge was seen.
func Unavailable(line string) bool { return strings.HasPrefix(line, unavailable) }

const unavailable = "server metrics: not available ("

// SourceIn returns the metric a Found line (results.json's server.metrics) says the gauge
// name was read from, as Source does on the scraper that wrote it; "" when it names none.
func SourceIn(line, name string) string {
	found, ok := strings.CutPrefix(line, foundPrefix)
	if !ok || Unavailable(line) {
		return ""
	}
	found, _, _ = strings.Cut(found, "; not found: ")
	for _, part := range strings.Split(found, ", ") {
		if m, ok := strings.CutPrefix(part, name+" ← "); ok {
			return m
		}
	}
	return ""
}

// foundPrefix begins every Found line.
const foundPrefix = "server metrics: "

// Found describes, in one line, which server gauges were found and from which metrics, or why
// none were, e.g. "server metrics: decode_running ← sglang:num_running_reqs, …" or
// "server metrics: not available (GET http://…/metrics → 404)".
func (s *Scraper) Found() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.found) == 0 {
		if len(s.failed) == 0 {
			return "server metrics: none of the known gauges found"
		}
		var why []string
		for _, w := range s.failed {
			why = append(why, w)
		}
		sort.Strings(why)
		return unavailable + strings.Join(why, "; ") + ")"
	}
	var parts []string
	for _, name := range events.Gauges {
		if m, ok := s.found[name]; ok {
			parts = append(parts, name+" ← "+m)
		}
	}
	var missing []string
	for _, name := range events.Gauges {
		if _, ok := s.found[name]; !ok {
			missing = append(missing, name)
		}
	}
	line := foundPrefix + strings.Join(parts, ", ")
	if len(missing) > 0 {
		line += "; not found: " + strings.Join(missing, ", ")
	}
	return line
}
