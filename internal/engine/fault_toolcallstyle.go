package engine

import "math/rand/v2"

// ToolCallShape streams Fraction of the replies that call tools in Style instead of the
// profile's agent.tool_call_style: the variants real servers send that break some client
// parsers (an OpenAI Agents SDK harness fails on name-every-chunk and no-id).
type ToolCallShape struct {
	// Style is repeat-ids, name-every-chunk, no-id or openai; default name-every-chunk.
	Style string `mapstructure:"style"`
	// Fraction is the share of requests whose tool calls take that style, from 0 to 1;
	// default 1.
	Fraction float64 `mapstructure:"fraction"`
}

var _ Fault = (*ToolCallShape)(nil)

// Name implements Fault.
func (*ToolCallShape) Name() string { return "tool-call-style" }

// String implements Fault.
func (s *ToolCallShape) String() string { return describe(s) }

// Validate implements Fault.
func (s *ToolCallShape) Validate() error {
	var ps problems
	ps.oneOf("style", s.Style, toolCallStyles...)
	ps.fraction("fraction", s.Fraction)
	return ps.err()
}

func (*ToolCallShape) configure(*Knobs) {}

func (s *ToolCallShape) plan(p *Plan, r *rand.Rand) {
	if r.Float64() < s.Fraction {
		p.ToolCallStyle = ToolCallStyle(s.Style)
	}
}
