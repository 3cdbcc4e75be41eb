// Package dns is the DNS door: Consul's DNS interface (--dns, by default
// 127.0.0.1:8600 over UDP and TCP on one port) answered from the agent's
// own table, so that anything that resolves NAME.service.consul, or
// follows SRV records (HAProxy, Traefik, a resolver forwarding the
// "consul." zone), finds every broker and provider the cluster knows. The
// services are those of the Consul door's model (package
// agent/consul/catalog, docs/protocols/consul.md): the same names and tags
// as its HTTP API.
//
// # How a query is answered
//
//  1. Decode (wire.go): a response or a runt gets no reply; an opcode
//     other than QUERY gets NOTIMP; anything but one question (and at most
//     the EDNS record beside it), or bytes that do not parse, get FORMERR.
//  2. A name outside the zone is REFUSED: the door recurses to no one.
//  3. The name is read from the right (answer.go): the first label that is
//     a kind ("service", "node", "addr", or an "_x" label in an SRV
//     question) splits it into what is asked and an optional datacenter,
//     which must be ours (dc1). [TAG.]NAME.service and _NAME._TAG.service
//     (_tcp: any tag) list the instances of NAME carrying TAG whose checks
//     are not critical (nor warning, with only_passing), in random order;
//     NODE.node is an agent's address; HEX.addr the address it spells, the
//     targets of SRV records for instances with their own address.
//  4. A or AAAA questions get the instances' addresses; SRV questions get
//     one SRV per instance whose target's address is in the additional
//     section. Nothing known is NXDOMAIN, a known name without records of
//     the type asked NOERROR, both with the zone's SOA in the authority
//     section. TTLs are 0: an instance whose check fails is gone from the
//     next answer.
//  5. The reply is cut to its transport as Consul cuts it (trim.go).
//
// The door keeps no state of its own: every answer is read from the table
// at the time of the query, on every agent alike, since check states are
// part of the records that spread.
//
// # Bounds
//
// UDP queries are read by a fixed number of goroutines (a flood waits in,
// and is dropped by, the socket's buffer); TCP connections are a
// conns.Set bounded in number, closed after 2 s without a first query, 8 s
// idle or 128 queries; a query is at most 64 KiB by the wire format.
//
// # Not served
//
// Prepared queries, Connect, ingress, virtual IPs, other datacenters,
// peers, node metadata (TXT) and reverse (PTR) lookups: nothing matches
// them, so they are NXDOMAIN, as with a Consul that has none. NS lists no
// servers (namecast has none).
package dns
