package routes

import "unique"

// How a replica keeps a queue record, the bulk of every table (1000 of
// them per broker): its entry and nothing else, where a Queue is 96 bytes.
//
//   - The topic and broker name are not stored: they are the key's
//     components (queue/{broker}/{topic}, neither containing '/').
//   - The numbers (queue counts, perm, the providing registration's
//     version) are interned: a broker's topics nearly all carry the same
//     ones, so 100,000 records share a handful of values, and the entry's
//     stored interface holds the handle itself.
//   - The entry carries its origin, so the view index is a plain list of
//     entry pointers per topic rather than a map from record to origin.

// queueVals is a Queue without its names.
type queueVals struct {
	ReadQueueNums, WriteQueueNums, Perm, TopicSysFlag int
	From, StateVersion, Counter                       int64
	Stamp                                             uint64
	Copy                                              bool
}

func valsOf(q *Queue) queueVals {
	return queueVals{ReadQueueNums: q.ReadQueueNums, WriteQueueNums: q.WriteQueueNums, Perm: q.Perm,
		TopicSysFlag: q.TopicSysFlag, From: q.From, StateVersion: q.StateVersion, Counter: q.Counter, Stamp: q.Stamp, Copy: q.Copy}
}

// outranks reports whether q takes precedence over o for the same broker
// name and topic, as Java's one table would hold it: the master's data
// over a slave's (lower slave id first: a 5.x prime slave writes only
// while no master is registered), then the newer broker configuration
// in controller mode (stateVersion), then the later write (the Lamport
// Stamp of the registration that wrote it, recency.go: Java keeps the
// last write, and a registration writes when its DataVersion differs
// from the address's last, whatever the counter says), then the
// provider's own record over a copy of it. The counter only orders
// records of one stamp (written by agents that stamp no queue data).
// Ties are broken by the caller, by origin name.
func (q queueVals) outranks(o queueVals) bool {
	switch {
	case (q.From == 0) != (o.From == 0):
		return q.From == 0
	case q.From != o.From:
		return q.From < o.From
	case q.StateVersion != o.StateVersion:
		return q.StateVersion > o.StateVersion
	case q.Stamp != o.Stamp:
		return q.Stamp > o.Stamp
	case q.Counter != o.Counter:
		return q.Counter > o.Counter
	case q.Copy != o.Copy:
		return !q.Copy
	}
	return false
}

// sameContent reports whether q and o carry the same queue data from the
// same provider, whatever their stamps and copy flags.
func (q queueVals) sameContent(o queueVals) bool {
	q.Stamp, q.Copy, o.Stamp, o.Copy = 0, false, 0, false
	return q == o
}

// The methods below are for entries of queue records.

func (e *entry) vals() unique.Handle[queueVals] { return e.rec.p.(unique.Handle[queueVals]) }

// brokerName is the key's broker component.
func (e *entry) brokerName() string {
	rest := e.key[len(queuePrefix):]
	for i := 0; i < len(rest); i++ {
		if rest[i] == '/' {
			return rest[:i]
		}
	}
	return rest
}

// topic is the key's topic component.
func (e *entry) topic() string { return e.key[len(queuePrefix)+len(e.brokerName())+1:] }

// onBroker reports whether the record is of broker name, without
// scanning the key for its separator.
func (e *entry) onBroker(name string) bool {
	rest := e.key[len(queuePrefix):]
	return len(rest) > len(name) && rest[len(name)] == '/' && rest[:len(name)] == name
}

// queue is the record as a Queue the caller owns.
func (e *entry) queue() *Queue {
	v := e.vals().Value()
	return &Queue{Topic: e.topic(), BrokerName: e.brokerName(), ReadQueueNums: v.ReadQueueNums,
		WriteQueueNums: v.WriteQueueNums, Perm: v.Perm, TopicSysFlag: v.TopicSysFlag, From: v.From,
		StateVersion: v.StateVersion, Counter: v.Counter, Stamp: v.Stamp, Copy: v.Copy}
}

// before orders two queue records of one (broker name, topic): the one
// that outranks the other (queueVals.outranks), then the lower origin name.
func (e *entry) before(o *entry) bool {
	if a, b := e.vals(), o.vals(); a != b {
		if a.Value().outranks(b.Value()) {
			return true
		}
		if b.Value().outranks(a.Value()) {
			return false
		}
	}
	return e.origin != o.origin && e.origin.Value() < o.origin.Value()
}

// hasQueueKey reports whether key is QueueKey(broker, topic), without
// building it.
func hasQueueKey(key, broker, topic string) bool {
	n := len(queuePrefix)
	return len(key) == n+len(broker)+1+len(topic) && key[:n] == queuePrefix && key[n:n+len(broker)] == broker &&
		key[n+len(broker)] == '/' && key[n+len(broker)+1:] == topic
}
