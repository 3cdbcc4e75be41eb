// Package rocketmq serves RocketMQ's NameServer protocol from a namecast
// agent, so that unmodified brokers and clients use the agent beside them
// (127.0.0.1:9876) as their NameServer. The wire specification is
// /work/shared/protocols/rocketmq-remoting.md; section numbers in comments
// (§5.2, ...) refer to it. Bytes are encoded and decoded by package remoting;
// this package decides what to answer.
//
// # How a NameServer maps onto namecast
//
//  1. A broker registers (REGISTER_BROKER) on one agent. That agent's Server
//     keeps the broker's live entry, keyed like Java's brokerLiveTable by
//     (cluster, broker address): its DataVersion, last heartbeat, timeout and
//     the connection it registered over. The registration itself becomes
//     this agent's records (routes.Broker, one routes.Queue per topic for a
//     master) through Registry.Apply, which gossips them to every agent.
//  2. Every agent answers route queries (GET_ROUTEINFO_BY_TOPIC, ...) from
//     the replicated table, so a client may ask any agent, typically the one
//     beside it. Answers are encoded once per table change and reused.
//  3. Liveness decisions are local to the agent holding the broker's
//     connection, as in Java: the connection closing, an UNREGISTER_BROKER,
//     or 120 s without a heartbeat (scanned every 5 s) withdraw the broker's
//     records, and gossip withdraws them everywhere. If the agent itself
//     dies, the gossip layer drops all its records.
//  4. Topic configuration is applied per topic, and only when the broker's
//     DataVersion changed, on a first registration, or for a topic the agent
//     holds no queue data for (§5.2 step 8). That is what keeps a "wipe write
//     perm" in force across the broker's 30 s re-registrations.
//  5. Admin writes to records another agent owns (wipe/add write perm,
//     delete topic, sent by mqadmin to any agent) travel as commands: short
//     lived cluster-scoped rules addressed to the owning agent, which applies
//     them to its records and deletes the command (commands.go).
//  6. KV config (PUT_KV_CONFIG, ...) is cluster-scoped: written with
//     Registry.ApplyRules it replicates everywhere and persists.
//
// # Connections
//
// Requests on one connection may be pipelined. Reads (route and list
// queries) are answered on the connection's reader goroutine, batching
// responses into one write while more requests are buffered; requests that
// change state run in order on a per-connection worker, so a slow
// registration does not hold up queries behind it and responses may leave in
// another order than requests came (clients match them by opaque). Every
// response is written whole under the connection's write lock. A frame that
// fails to decode or exceeds the size cap closes the connection, as does
// 120 s without a request.
//
// # Concurrency
//
// A Server is safe for concurrent use. Close stops accepting, closes every
// connection and waits for every goroutine the Server started.
package rocketmq
