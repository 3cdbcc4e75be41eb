// Package vtime holds the agent tests that run whole clusters inside
// testing/synctest bubbles (agenttest.Memory): TestChaos and
// TestNoFalseDeaths, in protocol time rather than wall time.
//
// They live apart from package agent's tests, which run agents in real
// time, because a process has one go-metrics global sink, which memberlist
// writes to from every agent: its Prometheus summaries take their clock
// from their observations, and a series observed in a bubble (whose clock
// starts in 2000) and then in real time catches up 26 years under its
// lock, stalling every agent's memberlist and /metrics for minutes. In a
// binary where every agent runs in a bubble, the clock never jumps forward
// that way.
package vtime
