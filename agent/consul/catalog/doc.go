// Package catalog is the Consul door's service model: how every record
// namecast holds is a Consul service instance, and how a service
// registered through the Consul door is a record every other door shows.
// docs/protocols/consul.md says it for users; this package is the one
// place it is written down in code, read by the Consul HTTP door
// (agent/consul) and the DNS door (agent/dns).
//
// Reading (Lookup, Names, All) is a pure function of a routes.Table: no
// state, no goroutines, safe for concurrent use. Each instance names the
// node (agent) whose record it is, and carries its checks' states as that
// record holds them, so every agent answers ?passing alike.
//
// Writing (Registration.Record) turns a registration into the record the
// door applies: a Dubbo application-level instance znode
// (/services/{name}/{id}@{node}, Curator's JSON), whose payload metadata
// carries the Consul-only fields under reserved "consul." keys. Check
// state changes are new versions of that record (the holder re-applies
// it); output-only changes are not spread, as Consul's
// check_update_interval does not sync them either.
package catalog
