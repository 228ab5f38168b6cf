package cli

import (
	"os"
	"testing"
)

// TestMain lets tests run agentsim as a real process: with AGENTSIM_TEST_MAIN=1 the test
// binary behaves as the agentsim binary (its arguments after "--"), so signal tests need no
// separate build.
func TestMain(m *testing.M) {
	if os.Getenv("AGENTSIM_TEST_MAIN") == "1" {
		os.Unsetenv("AGENTSIM_TEST_MAIN") // not a workload key
		args := os.Args[1:]
		for i, a := range args {
			if a == "--" {
				args = args[i+1:]
				break
			}
		}
		os.Exit(Main(args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
