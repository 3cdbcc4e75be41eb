package routes

import "unique"

// How a replica keeps a queue record, the bulk of every table (1000 of
// them per broker): 32 bytes beside the key, where a Queue is 96.
//
//   - The topic and broker name are not stored: they are the key's
//     components (queue/{broker}/{topic}, neither containing '/'), read
//     back from the key the table holds anyway as its map key.
//   - The numbers (queue counts, perm, the providing registration's
//     version) are interned: a broker's topics nearly all carry the same
//     ones, so 100,000 records share a handful of values.
//   - The origin is interned too, so the view index is a plain list of
//     record pointers per topic rather than a map from pointer to origin.

// queueVals is a Queue without its names.
type queueVals struct {
	ReadQueueNums, WriteQueueNums, Perm, TopicSysFlag int
	From, StateVersion, Counter                       int64
	Copy                                              bool
}

func valsOf(q *Queue) queueVals {
	return queueVals{ReadQueueNums: q.ReadQueueNums, WriteQueueNums: q.WriteQueueNums, Perm: q.Perm,
		TopicSysFlag: q.TopicSysFlag, From: q.From, StateVersion: q.StateVersion, Counter: q.Counter, Copy: q.Copy}
}

// outranks reports whether q takes precedence over o for the same broker
// name and topic, as Java's table would hold it: the master's data over a
// slave's (lower slave id first), then the newer broker configuration
// (stateVersion, then DataVersion counter), then the provider's own record
// over a copy. Ties are broken by the caller, by origin name.
func (q queueVals) outranks(o queueVals) bool {
	switch {
	case (q.From == 0) != (o.From == 0):
		return q.From == 0
	case q.From != o.From:
		return q.From < o.From
	case q.StateVersion != o.StateVersion:
		return q.StateVersion > o.StateVersion
	case q.Counter != o.Counter:
		return q.Counter > o.Counter
	case q.Copy != o.Copy:
		return !q.Copy
	}
	return false
}

// queueRec is a stored queue record. The table owns it and never changes
// it; the view index holds its pointer.
type queueRec struct {
	key    string // queue/{broker}/{topic}
	origin unique.Handle[string]
	vals   unique.Handle[queueVals]
}

// newQueueRec stores q, held by origin, under key. key is q's key when it
// comes from the table (ops are checked against their record's key); any
// other key is replaced by q's own, so the names read back are q's.
func newQueueRec(origin, key string, q *Queue) *queueRec {
	if !hasQueueKey(key, q.BrokerName, q.Topic) {
		key = QueueKey(q.BrokerName, q.Topic)
	}
	return &queueRec{key: key, origin: unique.Make(origin), vals: unique.Make(valsOf(q))}
}

// hasQueueKey reports whether key is QueueKey(broker, topic), without
// building it.
func hasQueueKey(key, broker, topic string) bool {
	n := len(queuePrefix)
	return len(key) == n+len(broker)+1+len(topic) && key[:n] == queuePrefix && key[n:n+len(broker)] == broker &&
		key[n+len(broker)] == '/' && key[n+len(broker)+1:] == topic
}

// brokerName is the key's broker component.
func (q *queueRec) brokerName() string {
	rest := q.key[len(queuePrefix):]
	for i := 0; i < len(rest); i++ {
		if rest[i] == '/' {
			return rest[:i]
		}
	}
	return rest
}

// topic is the key's topic component.
func (q *queueRec) topic() string { return q.key[len(queuePrefix)+len(q.brokerName())+1:] }

// onBroker reports whether the record is of broker name, without
// scanning the key for its separator.
func (q *queueRec) onBroker(name string) bool {
	rest := q.key[len(queuePrefix):]
	return len(rest) > len(name) && rest[len(name)] == '/' && rest[:len(name)] == name
}

// queue is the record as a Queue the caller owns.
func (q *queueRec) queue() *Queue {
	v := q.vals.Value()
	return &Queue{Topic: q.topic(), BrokerName: q.brokerName(), ReadQueueNums: v.ReadQueueNums,
		WriteQueueNums: v.WriteQueueNums, Perm: v.Perm, TopicSysFlag: v.TopicSysFlag, From: v.From,
		StateVersion: v.StateVersion, Counter: v.Counter, Copy: v.Copy}
}

func (q *queueRec) equal(o *Queue) bool {
	return hasQueueKey(q.key, o.BrokerName, o.Topic) && q.vals.Value() == valsOf(o)
}

// before orders two records of one (broker name, topic): the one that
// outranks the other (queueVals.outranks), then the lower origin name.
func (q *queueRec) before(o *queueRec) bool {
	if q.vals != o.vals {
		a, b := q.vals.Value(), o.vals.Value()
		if a.outranks(b) {
			return true
		}
		if b.outranks(a) {
			return false
		}
	}
	return q.origin != o.origin && q.origin.Value() < o.origin.Value()
}
