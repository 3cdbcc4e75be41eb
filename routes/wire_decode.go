package routes

import (
	"encoding/binary"
	"fmt"
)

// PartDecoder decodes parts written by EncodeBinaryParts (see wire.go for
// the layout). Any malformation (a length past the end, a varint
// overflow, an unknown wire type, bytes left over) fails the whole part:
// nothing of it may be merged.
//
// The decoded ops share few allocations: one slab of ops and one of each
// kind of record per part, and a record's names are substrings of its key
// when they occur in it, as they do in every valid key, so a part of
// 10,000 queue records costs about 10,000 key strings and a handful of
// slabs instead of ~40,000 objects. The memory is reused from one Decode
// to the next: a message of four parts (~28,000 records of P4's table)
// costs one set of slabs instead of four, most of a joiner's garbage
// besides the records it keeps. The Snapshot a Decode
// returns, its ops and records, are valid until the next Decode; Merge
// copies what it keeps, so decode, merge, decode again is safe. The
// zero value is ready to use; it is not safe for concurrent use.
type PartDecoder struct {
	ops   []Op
	slabs recordSlabs
}

// Decode decodes one part.
func (d *PartDecoder) Decode(b []byte) (Snapshot, error) {
	d.slabs.reset()
	r := reader{b: b}
	s := Snapshot{Origin: r.str(), Inc: r.uv(), Seq: r.uv()}
	flags := r.uv()
	s.Authoritative = flags&1 != 0
	s.Lo, s.Hi = r.str(), r.str()
	n := r.uv()
	if r.err != nil {
		return Snapshot{}, fmt.Errorf("snapshot part header: %w", r.err)
	}
	if n > uint64(len(r.b))/minOpBytes {
		return Snapshot{}, fmt.Errorf("snapshot part claims %d ops in %d bytes", n, len(r.b))
	}
	if uint64(cap(d.ops)) < n {
		d.ops = make([]Op, n+n/4) // the next part is about as large
	}
	s.Ops = d.ops[:n]
	clear(s.Ops)
	slabs := &d.slabs
	prev := ""
	keyBuf := make([]byte, 0, 64)
	for i := range s.Ops {
		shared := r.uv()
		suffix := r.bytes()
		if r.err == nil && shared > uint64(len(prev)) {
			r.err = fmt.Errorf("op %d shares %d bytes of a %d-byte key", i, shared, len(prev))
		}
		if r.err != nil {
			return Snapshot{}, fmt.Errorf("snapshot part of %q: %w", s.Origin, r.err)
		}
		keyBuf = append(append(keyBuf[:0], prev[:shared]...), suffix...)
		op := &s.Ops[i]
		op.Key = string(keyBuf)
		op.Seq = r.uv()
		op.Writer = r.str()
		if kind := r.uv(); kind != 0 {
			fields := r.bytes()
			if r.err == nil {
				op.Rec = slabs.record()
				r.err = decodeRecord(op.Rec, kind, fields, op.Key, slabs)
			}
		}
		if r.err != nil {
			return Snapshot{}, fmt.Errorf("snapshot part of %q, op %d: %w", s.Origin, i, r.err)
		}
		prev = op.Key
	}
	if len(r.b) > 0 {
		return Snapshot{}, fmt.Errorf("snapshot part of %q: %d bytes after its last op", s.Origin, len(r.b))
	}
	return s, nil
}

// recordSlabs hands out zeroed records from chunks allocated as needed,
// and hands the same chunks out again after a reset.
type recordSlabs struct {
	recs    slab[Record]
	queues  slab[Queue]
	brokers slab[Broker]
}

const slabChunk = 256

func (sl *recordSlabs) reset() {
	sl.recs.reset()
	sl.queues.reset()
	sl.brokers.reset()
}

func (sl *recordSlabs) record() *Record { return sl.recs.next(slabChunk) }
func (sl *recordSlabs) queue() *Queue   { return sl.queues.next(slabChunk) }
func (sl *recordSlabs) broker() *Broker { return sl.brokers.next(16) }

// slab is a list of chunks and the next unused element.
type slab[T any] struct {
	chunks [][]T
	ci, i  int
}

func (s *slab[T]) next(size int) *T {
	if s.ci < len(s.chunks) && s.i == len(s.chunks[s.ci]) {
		s.ci, s.i = s.ci+1, 0
	}
	if s.ci == len(s.chunks) {
		s.chunks = append(s.chunks, make([]T, size))
	}
	p := &s.chunks[s.ci][s.i]
	s.i++
	var zero T
	*p = zero // a reused element holds the last decode's record
	return p
}

func (s *slab[T]) reset() { s.ci, s.i = 0, 0 }

// decodeRecord fills rec from a record's fields. Unknown kinds leave it
// empty (invalid: refused on merge); unknown field numbers are skipped.
func decodeRecord(rec *Record, kind uint64, b []byte, key string, sl *recordSlabs) error {
	f := fieldReader{reader: reader{b: b}, key: key}
	switch kind {
	case kindBroker:
		x := sl.broker()
		rec.Broker = x
		for f.next() {
			switch f.n {
			case 1:
				x.Cluster = f.str()
			case 2:
				x.Name = f.str()
			case 3:
				x.ID = f.int()
			case 4:
				x.Addr = f.str()
			case 5:
				x.HAAddr = f.str()
			case 6:
				x.Zone = f.str()
			case 7:
				x.StateVersion = f.int()
			case 8:
				x.ActingMaster = f.uint() != 0
			case 9:
				x.Filters = f.str()
			case 10:
				x.Stamp = f.uint()
			default:
				f.skip()
			}
		}
	case kindQueue:
		x := sl.queue()
		rec.Queue = x
		for f.next() {
			switch f.n {
			case 1:
				x.Topic = f.str()
			case 2:
				x.BrokerName = f.str()
			case 3:
				x.ReadQueueNums = int(f.int())
			case 4:
				x.WriteQueueNums = int(f.int())
			case 5:
				x.Perm = int(f.int())
			case 6:
				x.TopicSysFlag = int(f.int())
			case 7:
				x.From = f.int()
			case 8:
				x.StateVersion = f.int()
			case 9:
				x.Counter = f.int()
			case 10:
				x.Copy = f.uint() != 0
			case 11:
				x.Stamp = f.uint()
			default:
				f.skip()
			}
		}
	case kindURL:
		x := &URL{}
		rec.URL = x
		for f.next() {
			switch f.n {
			case 1:
				x.Interface = f.str()
			case 2:
				x.Category = f.str()
			case 3:
				x.URL = f.str()
			case 4:
				x.Path = f.str()
			case 5:
				x.Data = f.str()
			case 6:
				x.Owner = f.int()
			case 7:
				x.Stamp = f.uint()
			default:
				f.skip()
			}
		}
	case kindKV:
		x := &KV{}
		rec.KV = x
		for f.next() {
			switch f.n {
			case 1:
				x.Namespace = f.str()
			case 2:
				x.Key = f.str()
			case 3:
				x.Value = f.str()
			default:
				f.skip()
			}
		}
	case kindZnode:
		x := &Znode{}
		rec.Znode = x
		for f.next() {
			switch f.n {
			case 1:
				x.Path = f.str()
			case 2:
				x.Part = f.str()
			case 3:
				if d := f.raw(); d != nil {
					x.Data = append(make([]byte, 0, len(d)), d...)
				}
			case 4:
				x.Version = int32(f.int())
			case 5:
				x.Ctime = f.int()
			case 6:
				x.Mtime = f.int()
			case 7:
				x.Owner = f.int()
			case 8:
				x.Stamp = f.uint()
			case 9:
				x.Container = f.uint() != 0
			case 10:
				x.Replaces = f.uint()
			default:
				f.skip()
			}
		}
	case kindMapping:
		x := &Mapping{}
		rec.Mapping = x
		for f.next() {
			switch f.n {
			case 1:
				x.Topic = f.str()
			case 2:
				x.BrokerName = f.str()
			case 3:
				x.Bname = f.str()
			case 4:
				x.Scope = f.str()
			case 5:
				x.TotalQueues = int(f.int())
			case 6:
				x.Epoch = f.int()
			case 7:
				x.Dirty = f.uint() != 0
			case 8:
				x.IDs = f.str()
			case 9:
				x.From = f.int()
			default:
				f.skip()
			}
		}
	}
	return f.err
}

// reader consumes a byte slice; the first error sticks and every later
// read returns zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uv() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errTruncated
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) iv() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errTruncated
		return 0
	}
	r.b = r.b[n:]
	return v
}

// bytes returns the next length-prefixed bytes, aliasing the input;
// non-nil (possibly empty) unless an error occurred.
func (r *reader) bytes() []byte {
	n := r.uv()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errTruncated
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) str() string { return string(r.bytes()) }

// fieldReader walks a record's fields.
type fieldReader struct {
	reader
	key  string // the op's key, where a record's names are found
	n    uint64 // the current field's number
	wire uint64 // and wire type
}

func (f *fieldReader) next() bool {
	if f.err != nil || len(f.b) == 0 {
		return false
	}
	t := f.uv()
	f.n, f.wire = t>>2, t&3
	if f.err == nil && f.wire > wireBytes {
		f.err = fmt.Errorf("field %d: unknown wire type %d", f.n, f.wire)
	}
	return f.err == nil
}

func (f *fieldReader) want(wire uint64) bool {
	if f.err == nil && f.wire != wire {
		f.err = fmt.Errorf("field %d: wire type %d, want %d", f.n, f.wire, wire)
	}
	return f.err == nil
}

func (f *fieldReader) uint() uint64 {
	if !f.want(wireUvarint) {
		return 0
	}
	return f.uv()
}

func (f *fieldReader) int() int64 {
	if !f.want(wireVarint) {
		return 0
	}
	return f.iv()
}

func (f *fieldReader) raw() []byte {
	if !f.want(wireBytes) {
		return nil
	}
	return f.bytes()
}

// str is a string field, as a substring of the key when it occurs there
// (a valid record's names always do), else a copy.
func (f *fieldReader) str() string {
	b := f.raw()
	if i := indexIn(f.key, b); i >= 0 {
		return f.key[i : i+len(b)]
	}
	return string(b)
}

func (f *fieldReader) skip() {
	switch f.wire {
	case wireUvarint:
		f.uv()
	case wireVarint:
		f.iv()
	default:
		f.bytes()
	}
}

// indexIn is strings.Index(s, string(b)) without converting b: the
// comparison below does not allocate.
func indexIn(s string, b []byte) int {
	if len(b) == 0 {
		return -1
	}
	for i := 0; i+len(b) <= len(s); i++ {
		if s[i] == b[0] && s[i:i+len(b)] == string(b) {
			return i
		}
	}
	return -1
}
