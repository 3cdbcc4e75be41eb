package gossip

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/namecast/namecast/routes"
)

// msgParts answers a pull in routes' binary part encoding:
//
//	msgParts | version byte | from (uvarint length, bytes) | (part length uvarint, part)...
//
// A puller asks for it by naming the highest version it reads in its pull
// (pull.Bin); an agent that predates it sends no such field and is
// answered in JSON, and an agent that predates it, pulled by a newer one,
// ignores the field and answers in JSON, which every version reads. So a
// mixed cluster never sends this message to an agent that cannot read it;
// one that arrives in a version this agent does not know anyway is dropped
// whole, with a warning, rather than guessed at.
const msgParts byte = msgLeaving + 1

// msgPartsDeflated is msgParts with all after its type byte deflated
// (compress/flate, best speed), sent to a puller that asks for it
// (pull.Deflate). The profiles but wan turn memberlist's compression off
// (config.go): it compressed every packet, pings included, with a fresh
// LZW table, most of a join storm's CPU; snapshots, the only large
// messages, compress here instead, ~6x, with one compressor per answer.
const msgPartsDeflated byte = msgParts + 1

// maxInflatedMessage bounds what one msgPartsDeflated message may inflate
// to: memberlist's own cap on a user message, far above what a sender
// writes (maxSnapshotBytes and a part), so a message that inflates past it
// is refused whole rather than read into memory.
const maxInflatedMessage = 20 << 20

// maxBinaryPart caps one part's encoded ops. A binary op is ~45 bytes
// against JSON's ~100, and decodes to ~5x its size, so parts are a
// quarter of a message: a receiver holds about as many decoded ops at a
// time as with JSON parts of maxSnapshotBytes, and a message carries
// several parts, each decoded and merged before the next.
func maxBinaryPart() int { return max(maxSnapshotBytes/4, 1) }

// partsWriter fills msgParts messages of at most about maxSnapshotBytes
// and hands each full one to send. The first message of an answer goes
// as soon as it holds one part's worth: the puller decodes and merges it
// while we encode the rest, instead of waiting for a whole message (a
// quarter of the time to the first merge on a joiner).
type partsWriter struct {
	head  []byte
	msg   []byte
	parts int
	limit int // maxBinaryPart for the first message, then maxSnapshotBytes
	send  func(msg []byte)
}

func newPartsWriter(from string, send func([]byte)) *partsWriter {
	head := []byte{msgParts, routes.BinaryVersion}
	head = binary.AppendUvarint(head, uint64(len(from)))
	head = append(head, from...)
	// The buffer grows with what is added: most answers carry a few small
	// origins, and one sized for the largest message cost each a cleared
	// MiB (the bulk of an answer's CPU in a join storm).
	w := &partsWriter{head: head, send: send, limit: maxBinaryPart(), msg: make([]byte, 0, answerBufferStart)}
	w.msg = append(w.msg, head...)
	return w
}

func (w *partsWriter) add(part []byte) {
	if w.parts > 0 && len(w.msg)+len(part)+binary.MaxVarintLen64 > w.limit+snapshotOverhead {
		w.flush()
	}
	w.msg = binary.AppendUvarint(w.msg, uint64(len(part)))
	w.msg = append(w.msg, part...)
	w.parts++
}

func (w *partsWriter) flush() {
	if w.parts > 0 {
		w.send(w.msg)
		w.limit = maxSnapshotBytes
	}
	w.msg, w.parts = append(w.msg[:0], w.head...), 0
}

// readParts checks a msgParts message's header and calls each with every
// part's bytes in turn, stopping at the first error each returns.
func readParts(buf []byte, each func(from string, part []byte) error) error {
	if len(buf) < 2 {
		return errEmpty
	}
	if v := buf[1]; v != routes.BinaryVersion {
		return fmt.Errorf("snapshot parts in binary version %d; this agent reads version %d only (a newer agent sent them unasked: upgrade this one)", v, routes.BinaryVersion)
	}
	b := buf[2:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return fmt.Errorf("snapshot parts: truncated sender name")
	}
	from := string(b[k : k+int(n)])
	b = b[k+int(n):]
	for i := 0; len(b) > 0; i++ {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return fmt.Errorf("snapshot parts from %s: part %d truncated", from, i)
		}
		if err := each(from, b[k:k+int(n)]); err != nil {
			return fmt.Errorf("snapshot parts from %s: part %d: %w", from, i, err)
		}
		b = b[k+int(n):]
	}
	return nil
}

// handleParts decodes and merges a msgParts message one part at a time,
// so only one part's ops are held decoded, in memory each part reuses. A
// part that does not decode stops the message there: the parts merged
// before it are exact for their own key ranges, and the pull is repeated
// when it times out.
func (g *Gossip) handleParts(buf []byte) {
	var dec routes.PartDecoder
	err := readParts(buf, func(from string, part []byte) error {
		s, err := dec.Decode(part)
		if err != nil {
			return err
		}
		g.mergeSnapshots(snapshots{From: from, Snaps: []routes.Snapshot{s}})
		return nil
	})
	if err != nil {
		g.m.IncrCounter([]string{"gossip", "messages", "malformed"}, 1)
		g.log.Warn("dropped snapshot parts that do not decode", "err", err)
	}
}

// sendSnapshots answers a pull with what we hold of the live origins asked
// for, in messages under maxSnapshotBytes: small snapshots share one, and a
// large one is split into parts covering consecutive key ranges, each
// merged on its own, so an origin of any size can be synced. A puller that
// reads the binary encoding (bin) gets msgParts (parts.go); one that
// predates it, JSON.
func (g *Gossip) sendSnapshots(p pull) {
	to, bin := p.From, p.Bin >= 1
	var w *partsWriter
	var js *jsonParts
	switch {
	case bin && p.Deflate:
		d := newDeflater()
		defer d.release() // every message is sent before we return
		w = newPartsWriter(g.name, func(msg []byte) { g.sendAnswer(to, d.deflate(msg)) })
	case bin:
		w = newPartsWriter(g.name, func(msg []byte) { g.sendAnswer(to, msg) })
	default:
		js = newJSONParts(g.name, func(msg []byte) { g.sendAnswer(to, msg) })
	}
	for _, o := range p.Origins {
		if o != g.name && !g.alive(o) {
			continue
		}
		n := 0
		if bin {
			// Straight from the table: no copy of the origin's records.
			if !g.table.EncodeBinaryParts(o, maxBinaryPart(), func(part []byte) { w.add(part); n++ }) {
				continue
			}
		} else {
			s, ok := g.table.Snapshot(o)
			if !ok {
				continue
			}
			err := s.EncodeParts(maxSnapshotBytes, func(part []byte) { js.add(part); n++ })
			if err != nil {
				// Only our own plain structs are encoded here.
				panic(fmt.Sprintf("gossip: encoding %s's snapshot: %v", o, err))
			}
		}
		if n > 1 {
			g.m.IncrCounter([]string{"antientropy", "snapshots", "split"}, float32(n))
		}
	}
	if bin {
		w.flush()
	} else {
		js.flush()
	}
}

// jsonParts fills msgSnapshots messages: a snapshots value's JSON, written
// part by part into one buffer reused for every message of the answer.
type jsonParts struct {
	head, msg []byte
	parts     int
	send      func([]byte)
}

func newJSONParts(from string, send func([]byte)) *jsonParts {
	name, _ := json.Marshal(from)
	head := append(append(append([]byte{msgSnapshots}, `{"f":`...), name...), `,"s":[`...)
	js := &jsonParts{head: head, send: send, msg: make([]byte, 0, answerBufferStart)}
	js.msg = append(js.msg, head...)
	return js
}

func (js *jsonParts) add(part []byte) {
	if js.parts > 0 && len(js.msg)+len(part) > maxSnapshotBytes+snapshotOverhead {
		js.flush()
	}
	if js.parts > 0 {
		js.msg = append(js.msg, ',')
	}
	js.msg = append(js.msg, part...)
	js.parts++
}

func (js *jsonParts) flush() {
	if js.parts > 0 {
		js.send(append(js.msg, "]}"...))
	}
	js.msg, js.parts = append(js.msg[:0], js.head...), 0
}
