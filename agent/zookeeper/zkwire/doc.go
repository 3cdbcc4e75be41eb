// Package zkwire is the ZooKeeper client protocol on the wire: the 4-byte
// length framing, jute's binary encoding of primitives, and the records the
// namecast ZooKeeper door reads and writes (connect handshake, request and
// reply headers, Stat, the per-opcode requests and responses, watcher
// events). See docs/protocols/zookeeper-wire.md §1–§3 and §6 ("spec" in comments).
//
// Invariants:
//   - Nothing here allocates more than the bytes that arrived: a frame's
//     length is checked against the cap before its buffer is made, and every
//     string, buffer and vector length is checked against what remains of
//     the frame before it is read (fuzzed by FuzzReadPacket, FuzzRequest).
//   - Decoding accepts -1 lengths for strings, buffers and vectors (kazoo
//     writes an empty string as -1); encoding never writes -1 for a string
//     or a vector, which go-zookeeper cannot decode, and writes -1 for a
//     buffer only when it is nil.
//
// The package has no state and no goroutines; its types are plain values.
package zkwire
