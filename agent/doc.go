// Package agent is one namecast process: it builds the configuration,
// starts the route table, gossip, the HTTP API and the protocol listeners,
// owns the registrations of the processes beside it (expiring those with a
// TTL), and shuts them down in order.
//
// Lifecycle: New checks the configuration and starts nothing. Start binds
// every listener and joins the cluster, rolling back what it began if any
// step fails. Leave withdraws this agent's routes everywhere (a graceful
// memberlist leave), then shuts down. Shutdown is idempotent and stops, in
// order: the HTTP and protocol listeners, the TTL expiry loop, gossip; it
// returns when every goroutine the agent started has ended.
package agent
