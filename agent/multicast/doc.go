// Package multicast is the agent's door for Dubbo's multicast registry
// (multicast://GROUP:PORT, 224.5.6.7:1234 in Dubbo's documentation): the
// Dubbo processes of the agent's host keep their registry setting, and
// what they register reaches every host of the cluster, across subnets,
// with failure detection Dubbo's multicast registry lacks.
//
// The wire (package mcwire; docs/protocols/multicast.md, from apache/dubbo
// 3.3.1 dubbo-registry-multicast MulticastRegistry.java) is one UDP
// datagram per message, "register|unregister|subscribe|unsubscribe
// <url>", sent to the group; a subscribe is answered by every process
// holding a matching URL with "register <url>".
//
// How the door serves it:
//
//  1. It joins the group on one interface of its host (the one the host
//     routes the group through, or --multicast-interface) with a socket
//     bound to the group address itself, so the unicast answers Dubbo
//     processes send each other on the group port still reach them, and
//     it sends from a second socket on an ephemeral port (sockets.go).
//  2. A register or unregister from one of its host's addresses is a
//     registration it holds for that process: the URL record every door
//     shows (routes.URLKey, as the ZooKeeper and Nacos doors write it),
//     under one lease per URL so it survives the agent's restart. A
//     dynamic=false URL is a cluster-scoped rule instead, as through
//     every door. Datagrams from other hosts are left to their agents.
//  3. A subscribe from its host is answered for every matching URL of the
//     whole cluster (dubbo.Match, Dubbo's UrlUtils.isMatch), whatever
//     door and agent registered it: to the group when it asked
//     unicast=false or sent from one of the host's addresses, as Dubbo
//     answers a subscriber on its own host; unicast to a subscriber that
//     sent from loopback.
//  4. Every URL that appears or goes anywhere in the cluster (other than
//     those its host's processes multicast themselves) is announced to
//     the host's group as "register"/"unregister" (announce.go), so a
//     subscriber hears of changes as it would from Dubbo providers on
//     its subnet.
//  5. Every datagram the door sends is multicast with TTL 0, or unicast
//     to its own host: the door speaks only to its host. TTL 0 keeps a
//     multicast datagram off every network while loopback still delivers
//     it to the host's members of the group; Dubbo's own TTL 1 would
//     take it onto the subnet, where other hosts' agents already speak
//     for the same cluster and their processes would hear each change
//     twice.
//  6. Every Probe (10 s) each held provider is connected to twice, 100 ms
//     apart, as Dubbo's admin cleanup does; one whose port refuses both
//     is withdrawn, and the withdrawal is announced like any other.
//     Dubbo withdraws a dead provider only when an admin process runs;
//     here nobody needs to.
//
// Bounds: a datagram is read whole (up to UDP's 64 KiB) and refused when
// its first line passes Dubbo's 2048-byte receive buffer, whose cut URL
// every Dubbo receiver would misread; URLs are bounded by package dubbo
// (8 KiB); registrations per sending address by MaxPerSender; all of
// them by the agent's record budget (refused, counted in
// namecast_multicast_refused, logged at most every 10 s: multicast has
// no reply to carry an error). A URL too long for a Dubbo receiver is
// never sent. Bad datagrams change nothing, are counted
// (namecast_multicast_bad) and logged at most every 10 s.
//
// Concurrency: one goroutine reads the group and handles datagrams in
// order; the announce loop and the liveness check run beside it; a
// registration changes under Server.mu (hold, apply, then wait for the
// disk outside it).
package multicast
