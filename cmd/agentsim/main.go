// Command agentsim simulates a multi-agent LLM harness against an OpenAI-compatible server or
// its own embedded, calibrated simulated inference server.
package main

import (
	"os"

	"github.com/agentsim/agentsim/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
