package routes

// How a replica keeps a record, compactly: every agent holds the whole
// cluster's table (100,100 records for 100 brokers × 1000 topics), so each
// byte per record is paid 100,000 times on every host.
//
//   - stored is one interface word pair pointing at the single set field,
//     not Record's four pointers, three of them nil.
//   - The set field's name strings (topic, broker name, interface, ...) are
//     substrings of the record's key, which the table keeps anyway as its
//     map key, instead of separate copies decoded from the wire.
//   - The view indexes are keyed by that same pointer (see views.go).
//   - Queue records, nearly all of a table, are packed further
//     (queuerec.go).

// stored is a live record as the table keeps it: a *Broker, *queueRec,
// *URL, *KV, *Znode or *Mapping that the table owns and never changes.
type stored struct{ p any }

// store copies r (valid, with key as its key), held by origin, into
// table-owned memory whose key components share key's bytes.
func store(origin, key string, r Record) stored {
	switch {
	case r.Broker != nil:
		b := *r.Broker
		// broker/{name}/{id}
		b.Name = within(key, b.Name, len(brokerPrefix))
		return stored{&b}
	case r.Queue != nil:
		return stored{newQueueRec(origin, key, r.Queue)}
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

// within returns key[at:at+len(s)] when it equals s, else s itself: a key
// built by the record's Key method always matches, and anything else keeps
// its own copy rather than being misread.
func within(key, s string, at int) string {
	if at+len(s) <= len(key) && key[at:at+len(s)] == s {
		return key[at : at+len(s)]
	}
	return s
}

// record is a view of the stored record; callers must not change it. A
// queue record's is built on each call.
func (s stored) record() Record {
	switch p := s.p.(type) {
	case *Broker:
		return Record{Broker: p}
	case *queueRec:
		return Record{Queue: p.queue()}
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

func (s stored) equal(r Record) bool {
	if q, ok := s.p.(*queueRec); ok {
		return r.Queue != nil && q.equal(r.Queue)
	}
	return s.record().equal(r)
}

// clone is a copy the caller owns.
func (s stored) clone() Record {
	if q, ok := s.p.(*queueRec); ok {
		return Record{Queue: q.queue()}
	}
	return s.record().clone()
}
