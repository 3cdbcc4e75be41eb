// Package chaos drives a namecast cluster through faults and checks that it
// loses nothing.
//
// A run has three parts:
//
//   - a [Model]: the test's own account of what should be registered. It is
//     told what each call did (registered, unregistered, with what TTL, on
//     which node) and what happened to nodes (crashed, restarted), and knows
//     from that alone which records every replica must hold at the end. It
//     never reads a replica to decide what is expected, so a bug in the
//     table cannot hide itself.
//   - a driver, [Run]: random registrations, renewals, unregistrations,
//     cluster rules, crashes, restarts and partitions from one seeded RNG,
//     against any [System] (agents with their HTTP API, or bare gossip
//     instances in a synctest bubble).
//   - a checker, [Check]: once faults are lifted, every live replica sees
//     exactly the live nodes as alive, holds an identical digest, and holds
//     exactly the records the model expects: no live registration lost,
//     nothing of a dead owner or an expired or withdrawn registration left.
//
// [DeathLog] records every member a node declares dead or gone, for tests
// that require none: a flap between two polls of the membership still shows.
//
// Faults the model cannot decide are made explicit rather than guessed: a
// cluster rule (it outlives its writer) whose only copies were on nodes that
// crashed may be lost, so it is "unsettled" and the checker accepts either
// outcome for it, as long as every replica agrees.
//
// A seed fixes the driver's choices and the network's random stream, not
// which packet meets which draw: that depends on the order goroutines run
// in, so a replay repeats the scenario but not always the failure. Inside
// synctest, timing at least is exact.
//
// Concurrency: a Model is safe for concurrent use; Run drives one System
// from one goroutine.
package chaos
