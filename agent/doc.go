// Package agent is one namecast process: it builds the configuration,
// starts the route table, gossip, the lease and rule stores, the host every
// door is given (package host) and the doors themselves (registered in
// Config; package doorkit says the contract they keep), discovers
// peers, serves metrics, and shuts them down in order. The doors own their
// clients' registrations; the agent owns its lifecycle.
//
// Lifecycle: New checks the configuration and starts nothing. Start binds
// every listener and joins the cluster, rolling back what it began if any
// step fails. Leave withdraws this agent's routes everywhere (a graceful
// memberlist leave), then shuts down. Shutdown is idempotent and stops, in
// order: the doors, in the reverse of their order in Config (the HTTP API
// first), discovery, the agent's loops, gossip; it returns when every
// goroutine the agent started has ended.
package agent
