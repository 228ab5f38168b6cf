// Package gate holds agentsim's regression gate: the figures of a run that thresholds
// constrain (latency statistics, request and round counts, token rates, the verdict), the
// threshold language of a workload's thresholds: section and of --thresholds files, the
// change of each figure between a baseline run and a new one with its bootstrap confidence
// interval, and the evaluation of the rules, rendered as text, JUnit XML or Markdown
// (docs/gate.md).
package gate
