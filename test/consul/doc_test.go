// Package consul_test holds the Consul door's interop tests: the real
// github.com/hashicorp/consul/api client against agents of one cluster
// (agenttest, every door on loopback ports). Its own module, so the
// client stays out of the agent's dependencies. Nothing external is
// needed: no test here skips.
package consul_test
