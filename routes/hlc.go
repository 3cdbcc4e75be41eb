package routes

// Rule writes are ordered by a hybrid logical clock (Kulkarni et al.): a
// time is the wall clock in ms, shifted left 16 bits, plus a counter, and
// every write takes a time above both the local wall clock and every rule
// time this table has seen:
//
//	next = max(now_ms << 16, last + 1); on receipt: last = max(last, seen)
//
// Why not a plain Lamport clock: an agent's Lamport clock starts at 1, so a
// rule written on an agent that has not synced yet lost to every older
// rule, even on the agent that answered 200. Why not wall time alone: a
// host whose clock is behind would lose to older writes it had seen.
// The hybrid keeps the Lamport guarantee, never depending on clocks for
// it: a write made after its writer saw another write is ordered after it,
// whatever either host's clock says. The wall clock only orders writes
// that did not see each other (truly concurrent ones, where one must lose
// anyway) and lifts a fresh agent above the rules written before it
// started, as long as the clocks are roughly right. The agent also holds
// rule writes until its first sync with the cluster (agent.Ready), after
// which every rule it holds has been witnessed and even a clock far
// behind cannot lose its write. Times stay well inside a uint64 (wall
// time in ms needs 41 bits until the year 2039, 42 until 2109).
const hlcLogicalBits = 16

// nextRuleTime returns the time of a new rule write. t.mu must be held.
func (t *Table) nextRuleTime() uint64 {
	wall := uint64(max(t.now().UnixMilli(), 0)) << hlcLogicalBits
	t.ruleClock = max(wall, t.ruleClock+1)
	return t.ruleClock
}

// witnessRuleTime moves the clock past a rule time seen. t.mu must be held.
func (t *Table) witnessRuleTime(seen uint64) { t.ruleClock = max(t.ruleClock, seen) }
