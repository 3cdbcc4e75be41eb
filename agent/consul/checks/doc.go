// Package checks runs the health checks of the Consul services registered
// through one agent's Consul door: the agent that holds a service runs its
// checks, as a Consul agent runs those of its own services, and the
// door writes each change of status into the service's record, so that
// ?passing and DNS on every agent leave a failing service out within the
// gossip's time (docs/protocols/consul.md §2.1).
//
// Kinds, as Consul runs them (agent/checks of Consul 1.x):
//
//   - TTL: critical with output "TTL expired" unless UpdateTTL (the
//     /v1/agent/check/{pass,warn,fail}/{id} endpoints) is called again
//     within the TTL.
//   - TCP: a connection to the address within the timeout (default 10 s)
//     is passing, else critical; every interval.
//   - HTTP: the request (default GET) within the timeout; a 2xx answer
//     is passing, 429 Too Many Requests warning, anything else critical;
//     the output is the status line and the first 4 KiB of the body.
//     Every interval.
//
// A probe runs at once when a check is set, then every interval (at least
// 1 s, Consul's minimum); Consul waits a random part of the interval
// first, which only delays a new service's first passing.
//
// DeregisterCriticalServiceAfter (at least 1 min, Consul's minimum): a
// check that has been critical that long, without a break, has its
// service deregistered (Config.Deregister). Consul's reaper looks every
// 30 s, so it deregisters up to 30 s later than this runner does.
//
// Reports: a change of a check's status is told to Config.Report, with the
// output at that change; a change of output alone is not (Consul's
// check_update_interval does not sync it either), and is read with
// State. Reports and deregistrations are delivered in the order they
// happened by one goroutine of the runner, never with a lock of the
// runner held and never from inside a call into it, so the door may take
// its own lock and apply a record in them. A report of a check removed
// meanwhile may still arrive: the door ignores checks it no longer has.
//
// All methods are safe for concurrent use. Close stops every check and
// waits for the runner's goroutines; reports not yet delivered are
// dropped (the agent is going away).
package checks
