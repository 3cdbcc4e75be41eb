// Package prometheusconsul_test runs Prometheus' Consul service discovery
// (github.com/prometheus/prometheus/discovery/consul, in process, as a
// Prometheus server runs it for consul_sd_configs) against namecast
// agents' Consul door: the brokers and providers registered on any agent
// are its targets, and it follows their changes through the door's
// blocking queries.
//
// It is its own module so that Prometheus and its dependencies stay out
// of namecast's go.mod. It needs nothing from the host.
package prometheusconsul_test
