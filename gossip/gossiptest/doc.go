// Package gossiptest is an in-memory network for running memberlist (and so
// namecast agents) in one test process, with faults injected on demand.
//
// A [Network] hands out [Transport]s, one per node, that implement
// memberlist.NodeAwareTransport without opening sockets. Packets model UDP:
// they may be lost, delayed, duplicated and reordered. Streams model TCP:
// they are reliable in-memory pipes that a partition refuses to open and cuts
// when it begins. Faults are set by node name on the Network and may be
// changed while the cluster runs:
//
//   - SetLoss and SetLinkLoss drop packets at random (globally, per direction).
//   - SetDelay delays each packet, and each stream dial, by a random time in
//     a range; packets given different delays arrive out of order.
//   - SetDuplicate delivers some packets twice.
//   - Partition, Isolate and Heal cut and restore links both ways.
//   - Hang and Resume stop a node as SIGSTOP would: streams to it still
//     open (a kernel accepts them) but nothing it receives is answered.
//
// Each Transport counts what it sent, received, lost and duplicated (see
// [Stats]), so tests can measure bandwidth and check that faults happened.
//
// Invariants: after the network is closed, for the sum over all nodes,
// PacketsSent + PacketsDuplicated == PacketsReceived + PacketsDropped; a
// packet is never delivered across a link that was cut when it was sent or
// when it arrived.
//
// Concurrency: every method is safe for concurrent use. Random decisions come
// from one RNG seeded by NewNetwork and guarded by the network's mutex, so a
// given order of sends meets the same faults on every run; real-time tests
// still vary with goroutine scheduling. Each Transport owns one goroutine,
// which delivers its packets when they are due; Transport.Shutdown and
// Network.Close stop it and wait for it, and the package starts no other
// goroutine. It uses only timers and channels, so it also runs inside a
// testing/synctest bubble, where delays cost no wall time.
package gossiptest
