// Package consul is the Consul door: Consul's HTTP API (--consul, default
// 127.0.0.1:8500) on the agent's registry, so Prometheus'
// consul_sd_configs, Traefik, Spring Cloud Consul, Dubbo's Consul
// registry and every consul/api client find brokers and providers on the
// local agent, and register through it. docs/protocols/consul.md lists
// the endpoints, the service model (package catalog) and the deviations.
//
// # How it works
//
//  1. Reads (catalog, health, agent views) are pure functions of the
//     replicated table through package catalog: every record of every
//     door is an instance of a service, on the node (agent) holding it.
//  2. A registration (PUT /v1/agent/service/register) is one record of
//     this agent, an application-instance znode carrying the Consul-only
//     fields, held under a lease of door "consul" whose state is the
//     definition: saved before the answer with --data-dir, republished
//     after a restart, withdrawn on deregistration, gone with the agent.
//  3. Checks run on the agent holding the service (a catalog.Runner:
//     package agent/consul/checks, or the door's own API-only one). A
//     change of a check's status writes the record again, so every agent
//     answers ?passing alike; output alone stays on the holder.
//  4. Blocking queries (?index, ?wait) wait on the table's per-view
//     index (routes.Watch) of what the answer reads; X-Consul-Index is
//     this agent's index of that view (rising, never 0), a KV query's
//     the rules' clock time of the newest write under its key.
//  5. KV is the cluster's rules (kv.go); ?cas is atomic on one agent.
//
// # Concurrency
//
// A Server is safe for concurrent use; registrations and check reports
// are ordered by the registry's locks (registry.go), KV writes by kvMu.
// Close ends blocked queries and waits for every goroutine it started.
package consul
