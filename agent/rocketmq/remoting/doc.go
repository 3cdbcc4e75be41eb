// Package remoting is the wire layer of RocketMQ's remoting protocol as a
// NameServer speaks it: frames, their two header encodings, and the JSON
// bodies exchanged with brokers, clients and admin tools. What it follows is
// written in docs/protocols/rocketmq-remoting.md; section numbers in
// comments (§1.2, §3.5, ...) refer to it.
//
// It owns bytes only. It opens no sockets, keeps no state between calls and
// makes no policy decision a server must make (which code to answer, when to
// close a connection, what the route table holds); the server built on top of
// it decides those. Every function is safe for concurrent use except where a
// type says otherwise (a [Decoder] belongs to one connection's read loop).
//
// Inbound bytes are untrusted. Decoders check every length before they
// allocate for it, never allocate much beyond what the peer actually sent
// (a length field alone cannot make them reserve the whole frame cap), and
// report malformed input as an error, never a panic.
//
// Outbound bytes follow what Java's fastjson emits, because the clients in
// the field were only ever tested against it: compact JSON, properties in
// alphabetical order, null properties omitted, and, where the spec asks for
// it, broker-id map keys as bare numbers ([LegacyJSON]).
package remoting
