package routes

import "unique"

// How a replica keeps a record, compactly: every agent holds the whole
// cluster's table (100,100 records for 100 brokers × 1000 topics), so each
// byte per record is paid 100,000 times on every host.
//
//   - An entry is one 48-byte object: the key, the seq, the interned
//     origin and the record. The origin's live set is a table of entry
//     pointers keyed by the entry's own key (liveset.go), and the view
//     indexes hold the same pointers (views.go).
//   - stored is one interface word pair, not Record's six pointers, five
//     of them nil.
//   - The set field's name strings (topic, broker name, interface, ...) are
//     substrings of the record's key instead of separate copies decoded
//     from the wire.
//   - Queue records, nearly all of a table, store nothing but their
//     interned numbers (queuerec.go).

// entry is a live record of one origin. The table owns it and never
// changes it: a new write to the key makes a new entry.
type entry struct {
	key    string
	seq    uint64
	origin unique.Handle[string]
	rec    stored
}

// stored is a record as the table keeps it: a *Broker, a queue's
// unique.Handle[queueVals], a *URL, *KV, *Znode or *Mapping.
type stored struct{ p any }

// store copies r, whose key must be key, into table-owned memory whose
// key components share key's bytes. Every caller holds that: ops from the
// network are refused unless their record's key is theirs (applyChecked),
// and local writes take their keys from their records. Queue numbers are
// interned through last.
func store(key string, r Record, last *lastQueue) stored {
	switch {
	case r.Broker != nil:
		b := *r.Broker
		// broker/{name}/{id}
		b.Name = within(key, b.Name, len(brokerPrefix))
		return stored{&b}
	case r.Queue != nil:
		return stored{last.intern(valsOf(r.Queue))}
	case r.URL != nil:
		u := *r.URL
		// url/{interface}/{category}/{url}
		u.Interface = within(key, u.Interface, len(urlPrefix))
		u.Category = within(key, u.Category, len(urlPrefix)+len(u.Interface)+1)
		u.URL = within(key, u.URL, len(urlPrefix)+len(u.Interface)+len(u.Category)+2)
		return stored{&u}
	case r.KV != nil:
		kv := *r.KV
		// kv/{namespace}/{key}
		kv.Namespace = within(key, kv.Namespace, len(kvPrefix))
		kv.Key = within(key, kv.Key, len(kvPrefix)+len(kv.Namespace)+1)
		return stored{&kv}
	case r.Znode != nil:
		z := *r.Znode
		z.Data = copyData(z.Data)
		return stored{&z}
	case r.Mapping != nil:
		m := *r.Mapping
		// mapping/{broker}/{topic}
		m.BrokerName = within(key, m.BrokerName, len(mappingPrefix))
		m.Topic = within(key, m.Topic, len(mappingPrefix)+len(m.BrokerName)+1)
		return stored{&m}
	}
	return stored{}
}

// lastQueue is the last queue numbers interned and their handle. A
// broker's topics nearly all carry the same numbers and a snapshot's ops
// come in key order, a broker's topics one after the other, so most queue
// records of a merge skip unique.Make (a hash of the 64-byte value and a
// lookup in the runtime's concurrent map: ~8% of a joiner's merge of
// 100,100 records). Holding the handle keeps one value interned.
type lastQueue struct {
	vals   queueVals
	handle unique.Handle[queueVals]
	set    bool
}

func (l *lastQueue) intern(v queueVals) unique.Handle[queueVals] {
	if !l.set || l.vals != v {
		l.vals, l.handle, l.set = v, unique.Make(v), true
	}
	return l.handle
}

// within returns key[at:at+len(s)] when it equals s, else s itself: a key
// built by the record's Key method always matches, and anything else keeps
// its own copy rather than being misread.
func within(key, s string, at int) string {
	if at+len(s) <= len(key) && key[at:at+len(s)] == s {
		return key[at : at+len(s)]
	}
	return s
}

// record is a view of the entry's record; callers must not change it. A
// queue record's is built on each call.
func (e *entry) record() Record {
	switch p := e.rec.p.(type) {
	case *Broker:
		return Record{Broker: p}
	case unique.Handle[queueVals]:
		return Record{Queue: e.queue()}
	case *URL:
		return Record{URL: p}
	case *KV:
		return Record{KV: p}
	case *Znode:
		return Record{Znode: p}
	case *Mapping:
		return Record{Mapping: p}
	}
	return Record{}
}

func (e *entry) equal(r Record) bool {
	if v, ok := e.rec.p.(unique.Handle[queueVals]); ok {
		return r.Queue != nil && hasQueueKey(e.key, r.Queue.BrokerName, r.Queue.Topic) && v.Value() == valsOf(r.Queue)
	}
	return e.record().equal(r)
}

// clone is a copy the caller owns.
func (e *entry) clone() Record {
	if _, ok := e.rec.p.(unique.Handle[queueVals]); ok {
		return Record{Queue: e.queue()}
	}
	return e.record().clone()
}
