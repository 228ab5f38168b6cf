package sweep

import "strings"

// Dimension is one axis of the grid: a workload key and the values the sweep gives it.
type Dimension struct {
	// Key is a workload key as --set spells it, e.g. "pacer.kind".
	Key string `json:"key"`
	// Values are the key's values, as --set would take them, in the order given.
	Values []string `json:"values"`
}

// NoFault is the fault value of the cells that run the simulator healthy.
const NoFault = "none"

// FaultSep joins the faults one cell runs at once: "slow-decode+drop".
const FaultSep = "+"

// FaultNames splits one cell's fault value into the fault names the simulator takes; none
// for NoFault.
func FaultNames(fault string) []string {
	if fault == NoFault {
		return nil
	}
	return strings.Split(fault, FaultSep)
}
