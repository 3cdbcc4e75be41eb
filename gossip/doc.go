// Package gossip replicates a routes.Table across the cluster over one
// hashicorp/memberlist instance, and owns membership: who is alive, their
// tags, and the estimated round-trip time to each.
//
// # How a change travels
//
//  1. The agent changes its own records (routes.Table.ApplyLocal) and hands
//     the delta to Publish, which sends it at once to every live member it
//     knows, one UDP datagram each, as many ops packed in each as fit
//     (direct.go): N−1 datagrams per change, what a central server sends
//     too, so every member has it one network hop after the write. What
//     remains of the tail is then a datagram lost, or a member the origin
//     did not know yet, repaired by the queue below within a gossip tick
//     or two, and the receivers' own scheduling: a datagram waits in its
//     socket until its member's packet goroutine runs. Where a packet is
//     handled the moment it arrives (namecast-bench P6, 1,000 simulated
//     members), the last member has a change one link's delay after it is
//     made; with 10-100 agents in one process on a shared 2-core host,
//     a trial with many members late together is one in which the
//     process's goroutines waited tens to hundreds of milliseconds
//     runnable for a CPU, or the kernel did not run the process at all
//     (P1 logs both for each slow trial); a lost datagram makes one
//     member late instead, by up to a gossip tick. A direct budget
//     in datagrams bounds the origin's burst (at 1,000 members, 8 changes
//     at once and 2 a second); a change over it goes by the epidemic
//     push instead: each member pushes an op the first time it applies
//     it, at once, to GossipNodes random members (push.go), which misses
//     ~6% of members for a gossip tick or two.
//     Each op also becomes one broadcast named
//     origin+key, so memberlist's TransmitLimitedQueue drops a queued op
//     when a newer one for the same key arrives. Ops piggyback on SWIM
//     traffic to GossipNodes members per GossipInterval and are retransmitted
//     RetransmitMult·log(N+1) times by their origin. Every member relays an
//     op the first time it applies it; one that came direct goes into a
//     light queue, retransmitted log(N+1)·2 times, since nearly every member
//     has it already; one that came by gossip, into the full queue. A change too large to gossip (more than
//     MaxGossipOps ops, or an op over half a packet) is announced instead:
//     a notice of the origin's digest entry, on which peers that find
//     themselves behind pull the origin's snapshot over TCP at once. An op
//     over half a packet but within one (a Dubbo URL's, ~850 bytes) is
//     still pushed, and each member that applies it queues such a notice
//     in its place (relay.go), so the stragglers the pushes missed hear of
//     it on the next ticks, as they would of a small op, not from
//     anti-entropy a second or two later.
//  2. A peer applies an op only while its origin is a live member: a dead or
//     departed member's records are dropped on every agent (NotifyLeave) and
//     are never learned again from a third party until the member is back
//     (the table's drop floor makes the check and the drop atomic). A death
//     is confirmed before the routes go, by the member's own answer: a
//     crashed process refuses our TCP connection at once, a hung one (its
//     kernel accepts the connection) leaves our pings unacked for
//     ProbeTimeout, while a live member wrongly declared dead (a stale
//     verdict passed on after a partition heals) acks and keeps its routes
//     while it refutes (withdraw.go).
//     Every anti-entropy tick sweeps the records of any origin that is not
//     a live member, as a second line.
//  3. Anti-entropy: every AntiEntropyInterval each agent sends one random peer
//     a 20-byte summary of its digest over UDP. A peer whose summary differs
//     answers with its full digest over TCP and asks for ours; each side then
//     pulls, in one request, the snapshots of the origins it is behind on
//     (from that peer) or has diverged on (same seq, other hash: from the
//     origin itself, whose snapshot replaces whatever the puller holds of
//     it at or below the snapshot's seq, routes/doc.go). A
//     snapshot over 1 MiB goes in parts covering consecutive key ranges,
//     each merged on its own, so an origin of any size can be synced
//     (memberlist refuses a message over 20 MiB). Parts go in routes'
//     binary encoding to pullers that ask for it, in JSON to older ones
//     (parts.go), deflated when the puller asks: the profiles but wan turn
//     memberlist's own per-packet compression off (config.go), and the
//     transport compresses memberlist's push/pull itself (pushpull.go).
//     Pulls wait a short grace first, since a gap seen while a
//     change is still spreading usually closes by itself. memberlist's
//     push/pull carries the same digests, so a joining agent syncs at
//     once: it pulls without the grace, everything from the member it
//     joined through (the one that surely knows it yet). An
//     origin being pulled is left out of the digests we send, since its
//     entry is partial until every part has arrived; so is an origin the
//     table refuses for passing the budget (routes' receive.go), which is
//     pulled again only when a peer's digest shows it changed since.
//  4. An agent that finds its own name at a higher incarnation in a peer's
//     digest (a previous run whose clock was ahead) takes the next
//     incarnation above it and announces itself, as memberlist refutes for
//     its own (incarnation.go): peers replace the old records, never refuse
//     the new ones. A second live agent under the same name is another
//     matter: a join is refused on both sides when the other lists a live
//     member of a name at another address than the one we know, and the
//     joiner is told the live one's address (duplicate.go).
//  5. Members that failed (not those that left) are re-joined periodically,
//     so both sides of a healed partition merge again by themselves; the
//     cluster as a whole tries each about once per ReconnectInterval, so
//     an overloaded cluster's false deaths do not multiply push/pulls.
//  6. A member whose join answer listed fewer than GossipNodes others (it
//     joined through one whose own join was still in flight, as when a
//     whole cluster starts at once) pushes its state once more, to a
//     member it did not know then, as soon as it knows GossipNodes more:
//     otherwise its alive message, spent on the few it knew, reached the
//     rest only by memberlist's periodic push/pull (lonelyjoin.go).
//  7. A member whose alive message never reached us (its relays spent
//     elsewhere in a join storm) is listed in peers' digests long before
//     memberlist's periodic push/pull would tell us of it: an origin we
//     have never known as a member, still listed after a few anti-entropy
//     rounds, makes us push/pull with the peer listing it, one at a time
//     and backing off (viewrepair.go).
//  8. Ping acks carry Vivaldi coordinates, giving an RTT estimate to every
//     member without extra traffic.
//  9. Incoming streams pass through our transport (streams.go), which
//     bounds what a peer can make us hold: streams per peer IP and in all,
//     an idle deadline per read, and bytes per stream.
//
// # Concurrency
//
// memberlist calls the delegates from its own goroutines; nothing in them
// blocks on the network. Work that sends (digests, snapshots) goes to one
// worker goroutine owned by Gossip and stopped by Shutdown.
package gossip
