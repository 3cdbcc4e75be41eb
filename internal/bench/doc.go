// Package bench is the measuring kit behind cmd/namecast-bench: in-process
// clusters of namecast agents and of serf.Serf peers on loopback, a
// memberlist transport that counts the bytes each member sends, waiting for
// a condition on every replica at once, query load generation, memory
// readings, and the report (aligned tables and JSON).
//
// # What a figure means
//
// A Stat summarises repeated trials of one figure: p50, p99 and max by the
// nearest-rank rule, so with 20 trials p99 is the worst trial. A trial that
// times out counts at its timeout and is reported as missed; a figure never
// hides a lost delivery.
//
// Arrival times are taken by a goroutine per member that is already blocked
// on that member's change signal (routes.Table.Wait for agents, the event
// channel for serf) before the trial begins, so neither side is measured by
// polling, and both pay the same scheduling delay on a busy machine.
//
// # Ownership and concurrency
//
// Every cluster a scenario starts is closed by the scenario (Close is
// idempotent and waits for every member and transport), so ports are free
// again before the next scenario. Types are safe for concurrent use unless
// their comment says otherwise.
package bench
