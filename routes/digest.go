package routes

import (
	"encoding/binary"
	"hash/fnv"
)

// DigestEntry summarises what a replica holds of one origin. Two replicas
// hold the same records of an origin exactly when their entries are equal.
type DigestEntry struct {
	Inc  uint64 `json:"i"`
	Seq  uint64 `json:"s"`
	Hash uint64 `json:"h"`
}

// Digest maps origin to what a replica holds of it.
type Digest map[string]DigestEntry

// Behind reports whether a replica holding e should fetch the origin from a
// replica holding peer: peer is of a newer incarnation or has seen later ops.
func (e DigestEntry) Behind(peer DigestEntry) bool {
	return peer.Inc > e.Inc || (peer.Inc == e.Inc && peer.Seq > e.Seq)
}

// Diverged reports whether two replicas at the same point hold different
// records, which only the origin's own snapshot can settle.
func (e DigestEntry) Diverged(peer DigestEntry) bool {
	return peer.Inc == e.Inc && peer.Seq == e.Seq && peer.Hash != e.Hash
}

// Digest returns the table's digest.
func (t *Table) Digest() Digest {
	t.mu.RLock()
	defer t.mu.RUnlock()
	d := make(Digest, len(t.origins))
	for o, st := range t.origins {
		d[o] = DigestEntry{Inc: st.inc, Seq: st.seq, Hash: st.digestHash()}
	}
	return d
}

// Entry is the digest entry of one origin, without copying the digest.
func (t *Table) Entry(origin string) (DigestEntry, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st, ok := t.origins[origin]
	if !ok {
		return DigestEntry{}, false
	}
	return DigestEntry{Inc: st.inc, Seq: st.seq, Hash: st.digestHash()}, true
}

// Summary folds the digest into one number that is cheap to send every
// second: replicas with equal summaries almost surely hold the same table.
// Origins with no records and no history are left out, so an agent that
// never registered anything does not make every summary differ; retired
// records count (the marked hash), so that a replica still serving them
// pulls the origin's snapshot even when its new incarnation is empty.
func (t *Table) Summary() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var sum uint64
	for o, st := range t.origins {
		if st.seq == 0 && st.digestHash() == 0 {
			continue
		}
		sum ^= entryHash(o, DigestEntry{Inc: st.inc, Seq: st.seq, Hash: st.digestHash()})
	}
	return sum
}

// Summary of a digest, as Table.Summary computes it, for a digest received
// from a peer.
func (d Digest) Summary() uint64 {
	var sum uint64
	for o, e := range d {
		if e.Seq == 0 && e.Hash == 0 {
			continue
		}
		sum ^= entryHash(o, e)
	}
	return sum
}

func entryHash(origin string, e DigestEntry) uint64 {
	h := fnv.New64a()
	h.Write([]byte(origin))
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], e.Inc)
	binary.LittleEndian.PutUint64(b[8:], e.Seq)
	binary.LittleEndian.PutUint64(b[16:], e.Hash)
	h.Write(b[:])
	return mix(h.Sum64())
}

// pairHash hashes one live (key, writer, seq); the origin's hash is their
// XOR. writer is empty except for rules.
func pairHash(key, writer string, seq uint64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	if writer != "" {
		h.Write([]byte{0})
		h.Write([]byte(writer))
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seq)
	h.Write(b[:])
	return mix(h.Sum64())
}

// mix is a 64-bit finaliser (splitmix64): FNV alone leaves low bits weak,
// and XOR sums need every bit well spread.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
