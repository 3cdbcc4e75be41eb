package bench

import (
	"bytes"
	"compress/lzw"
	"encoding/binary"
	"io"
	"sort"
	"sync/atomic"
)

// Where idle traffic comes from. Each byte a member sends is put in one of
// these classes by reading memberlist's framing (label, CRC, LZW
// compression, compound packets) down to the message type, and for user
// messages the application's own type byte, so a change in idle traffic
// points at its cause. namecast's user types are gossip/messages.go's;
// serf's user messages are all counted as "serf messages".
const (
	SrcProbes     = "probes (ping, ack + payload)"
	SrcMembership = "membership gossip"
	SrcPushPull   = "push/pull"
	SrcOps        = "ops and notices"
	SrcSummaries  = "anti-entropy summaries"
	SrcAntiTCP    = "anti-entropy digests and snapshots"
	SrcSerf       = "serf messages"
	SrcOther      = "other"
)

// Sources counts bytes sent per class.
type Sources struct{ n [8]atomic.Uint64 }

var srcNames = [...]string{SrcProbes, SrcMembership, SrcPushPull, SrcOps, SrcSummaries, SrcAntiTCP, SrcSerf, SrcOther}

func srcIndex(name string) int {
	for i, n := range srcNames {
		if n == name {
			return i
		}
	}
	return len(srcNames) - 1
}

// Snapshot returns the bytes per class so far.
func (s *Sources) Snapshot() map[string]uint64 {
	out := map[string]uint64{}
	for i, n := range srcNames {
		if v := s.n[i].Load(); v > 0 {
			out[n] = v
		}
	}
	return out
}

// SourceNames lists the classes in a fixed order.
func SourceNames() []string { return srcNames[:] }

// countPacket charges a packet's wire bytes to the classes of the messages
// inside it, in proportion to their decoded sizes.
func (s *Sources) countPacket(b []byte, serf bool) {
	parts := map[int]int{}
	classify(b, serf, parts)
	total := 0
	for _, n := range parts {
		total += n
	}
	if total == 0 {
		s.n[srcIndex(SrcOther)].Add(uint64(len(b)))
		return
	}
	keys := make([]int, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	left := len(b)
	for i, k := range keys {
		share := len(b) * parts[k] / total
		if i == len(keys)-1 {
			share = left
		}
		left -= share
		s.n[k].Add(uint64(share))
	}
}

// memberlist v0.7 message types.
const (
	mlPing, mlIndirect, mlAck, mlSuspect, mlAlive, mlDead, mlPushPull, mlCompound, mlUser, mlCompress = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
	mlNack, mlCRC, mlLabel                                                                            = 11, 12, 244
)

// classify adds each message in b to parts (class index → decoded bytes).
func classify(b []byte, serf bool, parts map[int]int) {
	if len(b) >= 2 && b[0] == mlLabel {
		if n := 2 + int(b[1]); n <= len(b) {
			b = b[n:]
		}
	}
	if len(b) >= 5 && b[0] == mlCRC {
		b = b[5:]
	}
	if len(b) == 0 {
		return
	}
	switch b[0] {
	case mlCompress:
		if d := decompress(b[1:]); d != nil {
			classify(d, serf, parts)
			return
		}
		parts[srcIndex(SrcOther)] += len(b)
	case mlCompound:
		if len(b) < 2 {
			return
		}
		n := int(b[1])
		hdr := 2 + 2*n
		if hdr > len(b) {
			return
		}
		off := hdr
		for i := range n {
			l := int(binary.BigEndian.Uint16(b[2+2*i:]))
			if off+l > len(b) {
				return
			}
			classify(b[off:off+l], serf, parts)
			off += l
		}
	case mlPing, mlIndirect, mlAck, mlNack:
		parts[srcIndex(SrcProbes)] += len(b)
	case mlSuspect, mlAlive, mlDead:
		parts[srcIndex(SrcMembership)] += len(b)
	case mlPushPull:
		parts[srcIndex(SrcPushPull)] += len(b)
	case mlUser:
		parts[srcIndex(userClass(b[1:], serf))] += len(b)
	default:
		parts[srcIndex(SrcOther)] += len(b)
	}
}

// userClass names a user message by its first byte (gossip/messages.go).
func userClass(b []byte, serf bool) string {
	switch {
	case serf:
		return SrcSerf
	case len(b) == 0:
		return SrcOther
	case b[0] == 1 || b[0] == 2: // ops, notice
		return SrcOps
	case b[0] == 3: // summary
		return SrcSummaries
	case b[0] >= 4 && b[0] <= 6: // digest, pull, snapshots
		return SrcAntiTCP
	}
	return SrcOther
}

// decompress undoes memberlist's LZW envelope: a msgpack map
// {"Algo": 0, "Buf": bytes}, read here without a msgpack library.
func decompress(b []byte) []byte {
	i := bytes.Index(b, []byte("Buf"))
	if i < 0 || i+4 > len(b) {
		return nil
	}
	b = b[i+3:]
	var n, hdr int
	switch h := b[0]; {
	case h >= 0xa0 && h <= 0xbf:
		n, hdr = int(h&0x1f), 1
	case (h == 0xc4 || h == 0xd9) && len(b) >= 2:
		n, hdr = int(b[1]), 2
	case (h == 0xc5 || h == 0xda) && len(b) >= 3:
		n, hdr = int(binary.BigEndian.Uint16(b[1:])), 3
	case (h == 0xc6 || h == 0xdb) && len(b) >= 5:
		n, hdr = int(binary.BigEndian.Uint32(b[1:])), 5
	default:
		return nil
	}
	if hdr+n > len(b) {
		return nil
	}
	r := lzw.NewReader(bytes.NewReader(b[hdr:hdr+n]), lzw.LSB, 8)
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil && len(out) == 0 {
		return nil
	}
	return out
}

// streamClass names a stream by the first message written on it.
func streamClass(b []byte, serf bool) int {
	parts := map[int]int{}
	classify(b, serf, parts)
	best, bestN := srcIndex(SrcOther), -1
	for k, n := range parts {
		if n > bestN {
			best, bestN = k, n
		}
	}
	return best
}
