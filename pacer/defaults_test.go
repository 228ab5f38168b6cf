package pacer

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestDefaultsValidate checks that every kind's defaults make a valid configuration.
func TestDefaultsValidate(t *testing.T) {
	for _, k := range Kinds() {
		assert.NoError(t, Defaults(k).Validate(), "Defaults(%q).Validate()", k)
	}
}

// TestWithDefaults checks that only the unset parameters of the kind are filled.
func TestWithDefaults(t *testing.T) {
	unset := func(string) bool { return false }
	for _, tc := range []struct {
		name string
		in   Config
		set  func(string) bool
		want Config
	}{
		// aimd named alone takes Netflix's defaults.
		{"aimd alone", Config{Kind: KindAIMD}, unset,
			Config{Kind: KindAIMD, InitialLimit: 20, MinLimit: 20, MaxLimit: 200, BackoffRatio: 0.9}},
		// A parameter the configuration set is kept, even at zero, for Validate to refuse.
		{"set zero kept", Config{Kind: KindSlots}, func(k string) bool { return k == "pacer.slots" },
			Config{Kind: KindSlots}},
		// A parameter set to a value is kept; the others are filled.
		{"partial", Config{Kind: KindGradient, MaxLimit: 40}, func(k string) bool { return k == "pacer.max_limit" },
			Config{Kind: KindGradient, InitialLimit: 20, MinLimit: 20, MaxLimit: 40, Tolerance: 1.5}},
		// unlimited has no parameter to fill.
		{"unlimited", Config{Kind: KindUnlimited}, unset, Config{Kind: KindUnlimited}},
		// An unknown kind is left for Validate to name.
		{"unknown", Config{Kind: "fifo"}, unset, Config{Kind: "fifo"}},
	} {
		got := tc.in.WithDefaults(tc.set)
		assert.Equal(t, tc.want, got, "%s: %+v.WithDefaults", tc.name, tc.in)
	}
}
