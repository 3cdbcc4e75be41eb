package routes

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
)

// Split cuts a snapshot into parts of about maxBytes of encoded ops each,
// so that any table can be sent in messages of bounded size (memberlist
// refuses a user message over 20 MiB, and one origin can hold more). The
// parts cover consecutive key ranges: each lists the ops of its range
// only, so merging one part (authoritative or not) is exact for its range
// and leaves every other key alone, and the parts may arrive in any order.
// One op larger than maxBytes makes a part of its own. sizes are the
// parts' encoded ops, in bytes.
func (s Snapshot) Split(maxBytes int) (parts []Snapshot, sizes []int) {
	// The common case, a snapshot well under the limit, costs one cheap
	// pass: no sort, no encoding.
	bound := 0
	for _, op := range s.Ops {
		bound += opSizeBound(op)
	}
	if bound <= maxBytes {
		s.Lo, s.Hi = "", ""
		return []Snapshot{s}, []int{bound}
	}
	ops := append([]Op(nil), s.Ops...)
	sort.Slice(ops, func(i, j int) bool { return ops[i].Key < ops[j].Key })
	start, size := 0, 0
	cut := func(end int) {
		p := s
		p.Ops = ops[start:end:end]
		p.Lo, p.Hi = "", ""
		if start > 0 {
			p.Lo = ops[start].Key
		}
		if end < len(ops) {
			p.Hi = ops[end].Key
		}
		parts = append(parts, p)
		sizes = append(sizes, size)
		start, size = end, 0
	}
	for i, op := range ops {
		n := opSize(op)
		if size+n > maxBytes && i > start {
			cut(i)
		}
		size += n
	}
	cut(len(ops))
	return parts, sizes
}

// Covers reports whether key is in the snapshot's key range.
func (s Snapshot) Covers(key string) bool {
	return (s.Lo == "" || key >= s.Lo) && (s.Hi == "" || key < s.Hi)
}

// opSize is the encoded size of op, plus its separator.
func opSize(op Op) int {
	b, err := json.Marshal(op)
	if err != nil {
		return 1 << 10 // not reached: ops are plain structs
	}
	return len(b) + 1
}

// opSizeBound is at least op's encoded size: JSON spends at most 6 bytes on
// one byte of a string (\u00XX), 4/3 on bytes (base64), and the field
// names and numbers of any record fit in 256.
func opSizeBound(op Op) int {
	n := 64 + 6*(len(op.Key)+len(op.Writer))
	if r := op.Rec; r != nil {
		n += 256
		if b := r.Broker; b != nil {
			n += 6 * (len(b.Cluster) + len(b.Name) + len(b.Addr) + len(b.HAAddr) + len(b.Zone) + len(b.Filters))
		}
		if q := r.Queue; q != nil {
			n += 6 * (len(q.Topic) + len(q.BrokerName))
		}
		if u := r.URL; u != nil {
			n += 6 * (len(u.Interface) + len(u.Category) + len(u.URL))
		}
		if kv := r.KV; kv != nil {
			n += 6 * (len(kv.Namespace) + len(kv.Key) + len(kv.Value))
		}
		if z := r.Znode; z != nil {
			n += 6*(len(z.Path)+len(z.Part)) + 4*len(z.Data)/3 + 4
		}
	}
	return n
}

// partHeader is a Snapshot's fields but its ops, under the same JSON names:
// EncodeParts writes a part's ops first, then these, once its range is known.
type partHeader struct {
	Origin        string `json:"o"`
	Inc           uint64 `json:"i"`
	Seq           uint64 `json:"s"`
	Authoritative bool   `json:"a,omitempty"`
	Lo            string `json:"lo,omitempty"`
	Hi            string `json:"hi,omitempty"`
}

// EncodeParts is Split for a sender: the same parts, each handed to emit as
// the JSON of a Snapshot as soon as it is complete. Each op is encoded once,
// straight into its part's buffer, which is reused for the next part, so a
// sender holds one part at a time. Split followed by an encoding of its
// parts encoded every large snapshot's ops twice (once to size them), which
// was most of the CPU of answering a joiner's pull. emit must not keep the
// slice after it returns.
func (s Snapshot) EncodeParts(maxBytes int, emit func(part []byte)) error {
	bound := 0
	for _, op := range s.Ops {
		bound += opSizeBound(op)
	}
	if bound <= maxBytes {
		s.Lo, s.Hi = "", ""
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		emit(b)
		return nil
	}
	ops := slices.Clone(s.Ops)
	slices.SortFunc(ops, func(a, b Op) int { return strings.Compare(a.Key, b.Key) })
	var opBuf bytes.Buffer
	enc := json.NewEncoder(&opBuf)
	buf := make([]byte, 0, maxBytes+maxBytes/8)
	lo, size, count := "", 0, 0
	buf = append(buf, `{"ops":[`...)
	finish := func(hi string) error {
		h, err := json.Marshal(partHeader{Origin: s.Origin, Inc: s.Inc, Seq: s.Seq, Authoritative: s.Authoritative, Lo: lo, Hi: hi})
		if err != nil {
			return err
		}
		buf = append(append(buf, "],"...), h[1:]...) // h without its "{"
		emit(buf)
		buf = append(buf[:0], `{"ops":[`...)
		lo, size, count = hi, 0, 0
		return nil
	}
	for _, op := range ops {
		opBuf.Reset()
		if err := enc.Encode(op); err != nil {
			return err
		}
		b := bytes.TrimSuffix(opBuf.Bytes(), []byte("\n"))
		n := len(b) + 1 // as opSize: the op and its separator
		if size+n > maxBytes && count > 0 {
			if err := finish(op.Key); err != nil {
				return err
			}
		}
		if count > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, b...)
		size += n
		count++
	}
	return finish("")
}
