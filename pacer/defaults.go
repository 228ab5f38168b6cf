package pacer

import "slices"

// kindDefaults are the parameters each kind takes when a configuration names the kind but
// leaves some of its parameters unset, so that a kind can be chosen by its name alone
// (--set pacer.kind=aimd). aimd and gradient take Netflix's AIMDLimit and Gradient2Limit
// defaults; the fixed-limit and rate kinds take a limit of 16 permits, 1 request per
// simulated second with bursts of 4, and the tpm kind a budget of 1,000,000 tokens per
// simulated minute.
var kindDefaults = map[Kind]Config{
	KindSlots:     {Slots: 16},
	KindRate:      {RPS: 1, Burst: 4},
	KindSlotsRate: {Slots: 16, RPS: 1, Burst: 4},
	KindTicket:    {Slots: 16, RPS: 1},
	KindAIMD:      {InitialLimit: 20, MinLimit: 20, MaxLimit: 200, BackoffRatio: 0.9},
	KindGradient:  {InitialLimit: 20, MinLimit: 20, MaxLimit: 200, Tolerance: 1.5},
	KindTPM:       {TokensPerMinute: 1_000_000},
}

// Defaults returns the parameters kind k takes by default (see WithDefaults); the zero
// Config, apart from Kind, for a kind without parameters or an unknown kind.
func Defaults(k Kind) Config {
	c := kindDefaults[k]
	c.Kind = k
	return c
}

// WithDefaults returns c with every parameter its kind uses that set reports unset taken
// from Defaults(c.Kind). set is called with the key as the workload file spells it
// ("pacer.slots"); a parameter the configuration set, even to zero, is kept, so that
// Validate still reports a zero given on purpose.
func (c Config) WithDefaults(set func(key string) bool) Config {
	d, ok := designs[c.Kind]
	if !ok {
		return c
	}
	def := Defaults(c.Kind)
	for _, f := range configFields {
		if slices.Contains(d.uses, f.key) && !set(f.key) {
			f.copy(&c, def)
		}
	}
	return c
}
