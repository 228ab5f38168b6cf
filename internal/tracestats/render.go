package tracestats

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// RenderJSON writes s as one indented JSON object.
func RenderJSON(w io.Writer, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// Render writes s for a person: one topic a line, every duration with its unit.
func Render(w io.Writer, s Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "trace: %s", s.Source)
	if s.Created != "" {
		fmt.Fprintf(&b, " (created %s)", s.Created)
	}
	b.WriteString("\n")
	span := "first send to last end"
	if s.Concurrency == nil {
		span = "first send to last send"
	}
	fmt.Fprintf(&b, "requests: %d   sessions: %d   duration: %s (%s)\n", s.Requests, s.Sessions, secs(s.DurationS), span)
	fmt.Fprintf(&b, "requests per session: %s\n", plain(s.RequestsPerSession, ""))
	g := s.ContextGrowth
	fmt.Fprintf(&b, "context per session: first prompt %s; last prompt %s; growth %s\n",
		plain(g.FirstPromptTokens, " tokens"), plain(g.LastPromptTokens, " tokens"), plain(g.GrowthTokens, " tokens"))
	if g.NewTokens.N > 0 {
		fmt.Fprintf(&b, "new tokens per extending request: %s\n", plain(g.NewTokens, " tokens"))
	}
	fmt.Fprintf(&b, "tokens per request        p50      p90      max\n")
	for _, row := range []struct {
		name string
		d    Dist
	}{{"prompt", s.Tokens.Prompt}, {"cached", s.Tokens.Cached}, {"output", s.Tokens.Output}, {"reasoning", s.Tokens.Reasoning}} {
		fmt.Fprintf(&b, "  %-20s %8.0f %8.0f %8.0f\n", row.name, row.d.P50, row.d.P90, row.d.Max)
	}
	if s.TokensEstimated > 0 {
		fmt.Fprintf(&b, "  (%d of %d requests have estimated or unknown token counts)\n", s.TokensEstimated, s.Requests)
	}
	from := "the previous request's end"
	if s.AfterSFrom == "send" {
		from = "the previous request's send, so it includes that request's duration"
	}
	if s.ThinkTimeS.N > 0 {
		fmt.Fprintf(&b, "think time (after_s, from %s): p50 %s  p90 %s  max %s\n", from, secs(s.ThinkTimeS.P50), secs(s.ThinkTimeS.P90), secs(s.ThinkTimeS.Max))
	} else {
		b.WriteString("think time: none (no session has a second request)\n")
	}
	if c := s.Concurrency; c != nil {
		fmt.Fprintf(&b, "concurrency (requests in flight): mean %.1f  max %d", c.Mean, c.Max)
		if s.ConcurrencyNote != "" {
			fmt.Fprintf(&b, " (%s)", s.ConcurrencyNote)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "concurrency: unknown: %s\n", s.ConcurrencyNote)
	}
	p := s.PrefixReuse
	fmt.Fprintf(&b, "prefix reuse: %d of %d requests extend an earlier one of their session; %.0f %% of prompt tokens repeat that conversation; %.0f %% reported cached",
		p.ExtendingRequests, s.Requests, 100*p.ConversationTokensFraction, 100*p.CachedTokensFraction)
	if p.HashBlocks > 0 {
		fmt.Fprintf(&b, "; %.0f %% of %d hash blocks appeared in an earlier request", 100*p.SeenBeforeFraction, p.HashBlocks)
	}
	b.WriteString("\n")
	if s.Tools != nil {
		renderTools(&b, s.Tools, s.Requests)
	}
	fmt.Fprintf(&b, "status: %s\n", statuses(s.Status))
	_, err := io.WriteString(w, b.String())
	return err
}

// plain prints a distribution as "p50 X / p90 Y / max Z unit".
func plain(d Dist, unit string) string {
	if d.N == 0 {
		return "none"
	}
	return fmt.Sprintf("p50 %s / p90 %s / max %s%s", num(d.P50), num(d.P90), num(d.Max), unit)
}

func num(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

// secs prints seconds with their unit: "0.25 s", "9.0 s", "1234 s".
func secs(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f s", v)
	case v >= 1:
		return fmt.Sprintf("%.1f s", v)
	}
	return fmt.Sprintf("%.2f s", v)
}

func statuses(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
