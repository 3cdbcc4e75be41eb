// Package rocketmq serves RocketMQ's NameServer protocol from a namecast
// agent, so that unmodified brokers and clients use the agent beside them
// (127.0.0.1:9876) as their NameServer. What the code relies on of the
// protocol is written in docs/protocols/rocketmq-remoting.md; section
// numbers in comments (§5.2, ...) refer to it. Bytes are encoded and decoded by package remoting;
// this package decides what to answer.
//
// # How a NameServer maps onto namecast
//
//  1. A broker registers (REGISTER_BROKER) on one agent. That agent's Server
//     keeps the broker's live entry, keyed like Java's brokerLiveTable by
//     (cluster, broker address): its DataVersion, last heartbeat, timeout and
//     the connection it registered over. The registration itself becomes
//     this agent's records (routes.Broker, one routes.Queue per topic for a
//     master) through Host.Apply (package host), which gossips them to every agent.
//  2. Every agent answers route queries (GET_ROUTEINFO_BY_TOPIC, ...) from
//     the replicated table, so a client may ask any agent, typically the one
//     beside it. Answers are encoded once per table change and reused.
//  3. Liveness decisions are local to the agent holding the broker's
//     connection, as in Java: the connection closing, an UNREGISTER_BROKER,
//     or 120 s without a heartbeat (scanned every 5 s) withdraw the broker's
//     records, and gossip withdraws them everywhere. If the agent itself
//     dies, the gossip layer drops all its records; if it restarts with its
//     data dir, it resumes every broker registered here (leases.go, package
//     agent/lease) and no route changes anywhere. With a data dir, a
//     registration's lease is written before its records are applied and
//     on disk before the answer (writers at once share one fsync); one
//     that cannot be written is answered SYSTEM_ERROR and changes nothing,
//     and so is an UNREGISTER_BROKER whose removal cannot be. A close or
//     an expiry cannot be refused: the records go, and the removal is
//     saved once the disk takes writes (until then a restart restores the
//     lease only until its deadline).
//  4. Topic configuration is applied per topic, and only when the broker's
//     DataVersion changed, on a first registration, or for a topic the agent
//     holds no queue data for (§5.2 step 8). That is what keeps a "wipe write
//     perm" in force across the broker's 30 s re-registrations.
//  5. Admin writes to records another agent owns (wipe/add write perm,
//     delete topic, sent by mqadmin to any agent) travel as commands: short
//     lived cluster-scoped rules addressed to the owning agent, which applies
//     them to its records and deletes the command (commands.go).
//  6. KV config (PUT_KV_CONFIG, ...) is cluster-scoped: written with
//     Host.ApplyRules it replicates everywhere and persists.
//  7. 5.x static topics: the topicQueueMappingInfoMap a master (or prime
//     slave) registers becomes routes.Mapping records, one per topic, only
//     for brokers that send mappings; every agent returns a topic's as
//     topicQueueMappingByBroker (mappings.go).
//
// # One table over many agents
//
// A master and its slave run on different hosts, so they register with
// different agents. Every answer Java computes from its one table is
// computed here from every agent's records, the same way on every agent,
// with Java's precedence, whichever agents the members registered on:
//
//   - A group keeps its queue data while any member is registered anywhere:
//     each agent holding a member keeps a copy of the group's queue data as
//     routes answer it, and withdraws it with its last member (groups.go),
//     or when an admin deletes the topic (a command to every agent holding
//     a record of the group).
//     A master leaving, or its agent dying with its host, leaves the
//     slave's queues in place; in acting-master mode WRITE is cleared.
//   - A broker registers with every agent in its namesrvAddr, so several
//     agents may hold its registration: each keeps its own records (never
//     a copy of another agent's), so one agent letting go (the
//     connection, the agent dying or leaving, the broker moving) leaves
//     the others' in place and routes unchanged.
//   - Of several agents' queue data for one group and topic, routes take
//     the master's over a slave's (then the lower slave id: a 5.x prime
//     slave), then the later write (a Lamport stamp, routes' recency: Java
//     rewrites queue data when a registration's DataVersion differs from
//     its address's last, whatever the counter), then the original over
//     a copy (routes.Queue), then the lower agent name. Which content wins
//     each conflict is in the conflict table (conflicts.md, beside
//     rocketmq-remoting.md). Per broker id, the
//     address with the higher stateVersion wins, then the newest
//     registration (routes' recency: a Lamport stamp, then the agent
//     name); a registration under an id another agent holds with a higher
//     stateVersion is fenced.
//   - "The latest registration", which gives a group its zoneName and
//     enableActingMaster, is the member record with the highest Lamport
//     stamp (routes.Broker.Stamp): each agent's table stamps a broker
//     record when its content changes, past every stamp it has seen, so
//     every agent orders registrations alike. No decision compares the wall clocks of
//     two hosts: the orders used are the broker's stateVersion, the
//     master's precedence, and the Lamport stamp. Admin commands are collected by each agent's own clock only.
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
// 120 s without a request. A big frame is read only once its size is
// reserved (inflight.go). At most Config.MaxConns connections are open at
// once (10,000) and Config.MaxConnsPerIP from one client IP (1,000); a
// connection past either is closed before it is read, with a log line and
// the rocketmq.connections_refused counter. Java's NameServer bounds none,
// but a client process keeps one connection to it, so these bound a flood,
// not real use.
//
// # Concurrency
//
// A Server is safe for concurrent use. Close stops accepting, closes every
// connection and waits for every goroutine the Server started.
package rocketmq
