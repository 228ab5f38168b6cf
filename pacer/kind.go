package pacer

// Kind names a pacer design. The strings are the values of the workload file's pacer.kind.
type Kind string

// The pacer designs; the registry in registry.go builds each.
const (
	KindUnlimited Kind = "unlimited"
	KindSlots     Kind = "slots"
	KindRate      Kind = "rate"
	KindSlotsRate Kind = "slots+rate"
	KindTicket    Kind = "ticket"
	KindAIMD      Kind = "aimd"
	KindGradient  Kind = "gradient"
	KindTPM       Kind = "tpm"
)

// FixedLimit reports whether a design of kind k has a fixed number of permits, Config.Slots:
// slots, slots+rate and ticket. The others admit without a limit, by rate or budget alone,
// or with a limit that adapts.
func (k Kind) FixedLimit() bool { return k == KindSlots || k == KindSlotsRate || k == KindTicket }

// AdmitsWhenFree reports whether a design of kind k admits a waiting request as soon as
// fewer permits than its limit are in use. Only slots promises that: the others may also
// wait for a rate token, a ticket or a token budget.
func (k Kind) AdmitsWhenFree() bool { return k == KindSlots }
