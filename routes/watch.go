package routes

import (
	"context"
	"hash/maphash"
	"reflect"
	"sync"
	"unique"
)

// The table's index, and per-view indexes for blocking queries.
//
// The index is a counter that grows with every visible change; Wait blocks
// until it passes a value. Anything that must see every change (the data
// dir's savers, the RocketMQ door's command loop) waits on it.
//
// A blocking query only cares about its own answer. Waiting on the global
// index woke every open watch for every change anywhere in the cluster, so
// each view also has an index: the global index of the last change that
// could alter it. Views are named by watch keys (topic T's queues, broker
// B's records, the cluster table, the topic and service lists, the URLs
// of one interface and category, the members), and each key is hashed
// into one of the slots, each holding the index of the last change to
// any key in it. A view's index is the largest of its keys' slots:
//
//   - it is at least the index of the last change to the view, so a client
//     that blocks on it misses nothing;
//   - it can also move for a change to another key in the same slot.
//     Callers must treat a wake-up as "maybe changed", as Consul's blocking
//     queries ask their clients to.
//
// The slots grow with the table: slotsPerKey for each watch key its views
// have (its topics, broker names, interfaces), from minSlots up to
// maxSlots. A change to one key then shares a slot with a watch of w keys
// with probability about w/(slotsPerKey·K) for K keys: 100 unrelated
// changes a second over 1,000 names wake a two-key watch about once a
// minute (once in five at 2^16 slots), where the global index woke it 100
// times a second. A fixed 2^16 slots
// cost 512 KiB per table whatever its size: a gigabyte of a 2,000-member
// simulation, and most of a small client-side agent's table. Growth is by
// doubling, and a key's slot at 2n is its slot at n or that plus n, so the
// new slots copy the old ones' indexes: no view's index moves.
//
// On the write path a change appends its slots to a list (under the
// table's write lock, which every change holds); bump publishes them with
// the new index and wakes only the waiters of those slots.
const (
	minSlots    = 64
	maxSlots    = 1 << 16
	slotsPerKey = 32
)

// Watch keys name what a view depends on. Each is a string hashed into a
// slot; a Watch lists the keys of one answer. A nil Watch is the whole
// table: it waits on the global index.
type Watch []string

// Watches on the lists and tables a blocking query can read.
var (
	WatchTopics   = Watch{"\x00topics"}   // the list of topics
	WatchClusters = Watch{"\x00clusters"} // the cluster table: every broker
	WatchServices = Watch{"\x00services"} // the list of interfaces
	WatchMembers  = Watch{"\x00members"}  // membership (see Touch)
)

// Keys of one kind are prefixed with a byte and a NUL, except a broker's,
// which is its name: a topic's route names every broker it is on (100 in
// a 100×1000 table), and building a prefixed string for each on every
// query would be a large part of the answer's cost (docs/performance.md,
// P3). Names never hold a NUL, so keys
// of different kinds differ; were one to (a peer's bad record), the cost
// is a wake-up for nothing, never a missed one.
func topicKey(topic string) string   { return "t\x00" + topic }
func brokerKey(name string) string   { return name }
func serviceKey(iface string) string { return "s\x00" + iface }
func urlsKey(iface, category string) string {
	return "u\x00" + iface + "\x00" + category
}

// WatchBroker is the watch of the broker name's records (its route's
// addresses).
func WatchBroker(name string) Watch { return Watch{brokerKey(name)} }

// WatchService is the watch of the URLs of iface in category, and of
// whether iface has any URL at all (a query answers 404 when it has none).
func WatchService(iface, category string) Watch {
	return Watch{urlsKey(iface, category), serviceKey(iface)}
}

// WatchTopicRoute is the watch of topic's route: its queue data, and the
// records of every broker name the queue data names (whose addresses the
// route carries, and without which a queue is left out). The broker names
// are those of now: a queue on another broker changes the topic's key.
func (t *Table) WatchTopicRoute(topic string) Watch {
	t.mu.RLock()
	defer t.mu.RUnlock()
	qs := t.views.queues[topic]
	w := make(Watch, 1, 1+len(qs))
	w[0] = topicKey(topic)
	for i, q := range qs {
		// A broker named twice (two queue records, two origins) costs
		// a key twice: harmless to a max, and cheaper than a set.
		if name := q.brokerName(); i == 0 || !qs[i-1].onBroker(name) {
			w = append(w, brokerKey(name))
		}
	}
	return w
}

// watcher is the global index and the per-slot indexes. Waiters block on
// channels closed (then forgotten) when their slot, or for the global
// index the table, changes: any number of waiters, no goroutine per
// waiter inside the table.
type watcher struct {
	seed maphash.Seed

	// marks are the keys' hashes changed since the last bump (the slot
	// count may grow before the bump). Guarded by the table's mu, held for
	// writing by every change.
	marks []uint64
	// keys counts the table's watch keys, for the slot count; read in bump
	// under the table's write lock.
	keys func() int

	mu      sync.Mutex
	index   uint64
	changed chan struct{}            // closed at every bump
	slots   []uint64                 // index of the last change per slot; len a power of two
	waiters map[uint64]chan struct{} // by slot; closed when the slot changes
}

func (w *watcher) init() {
	w.seed = maphash.MakeSeed()
	w.index = 1
	w.changed = make(chan struct{})
	w.waiters = map[uint64]chan struct{}{}
	w.slots = make([]uint64, minSlots)
}

// slot is key's slot. w.mu must be held: the slot count grows.
func (w *watcher) slot(key string) uint64 {
	return maphash.String(w.seed, key) & uint64(len(w.slots)-1)
}

// mark records that the coming bump changes key. The table's mu must be
// held for writing.
func (w *watcher) mark(key string) { w.marks = append(w.marks, maphash.String(w.seed, key)) }

// grow doubles the slots until there are slotsPerKey per watch key. w.mu
// must be held. Waiters are woken to wait again on their keys' new slots;
// their views' indexes are unchanged, so none returns for it.
func (w *watcher) grow() {
	want := minSlots
	if w.keys != nil {
		for want < maxSlots && want < slotsPerKey*w.keys() {
			want *= 2
		}
	}
	if want <= len(w.slots) {
		return
	}
	slots := make([]uint64, want)
	for i := range slots {
		slots[i] = w.slots[i&(len(w.slots)-1)]
	}
	w.slots = slots
	for s, ch := range w.waiters {
		close(ch)
		delete(w.waiters, s)
	}
}

// maxKeptMarks is the most marks (8 bytes each) a bump keeps room for.
const maxKeptMarks = 16 << 10

// bump publishes a change: the global index grows by one, the slots marked
// since the last bump take its value, and their waiters wake. The table's
// mu must be held for writing (so marks are ours to take).
func (w *watcher) bump() {
	w.mu.Lock()
	w.index++
	close(w.changed)
	w.changed = make(chan struct{})
	w.grow()
	mask := uint64(len(w.slots) - 1)
	for _, h := range w.marks {
		s := h & mask
		w.slots[s] = w.index
		if ch, ok := w.waiters[s]; ok {
			close(ch)
			delete(w.waiters, s)
		}
	}
	w.mu.Unlock()
	// A large merge's list is not kept for good, but a snapshot part's
	// (~7,000 marks, 56 KiB) is: a joiner's merge of 15 parts regrew it
	// from nothing for each, ~2.7 MB of garbage in a 100,100-record join.
	if cap(w.marks) > maxKeptMarks {
		w.marks = nil
	} else {
		w.marks = w.marks[:0]
	}
}

func (w *watcher) current() (uint64, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.index, w.changed
}

// viewIndexLocked is the index of the last change to any of keys, at least
// 1 (the index of the empty table). w.mu must be held.
func (w *watcher) viewIndexLocked(keys Watch) uint64 {
	idx := uint64(1)
	for _, k := range keys {
		idx = max(idx, w.slots[w.slot(k)])
	}
	return idx
}

// Index is the table's current index. It starts at 1, so a blocking query
// with index 0 returns at once.
func (t *Table) Index() uint64 {
	i, _ := t.watch.current()
	return i
}

// IndexOf is the index of the last change w could see: the global index
// for a nil Watch. Read it before reading the view, so that a change
// between the two makes the next wait return rather than be missed.
func (t *Table) IndexOf(w Watch) uint64 {
	if w == nil {
		return t.Index()
	}
	t.watch.mu.Lock()
	defer t.watch.mu.Unlock()
	return t.watch.viewIndexLocked(w)
}

// Wait blocks until the index is greater than after or ctx is done, and
// returns the index then.
func (t *Table) Wait(ctx context.Context, after uint64) uint64 {
	for {
		i, ch := t.watch.current()
		if i > after {
			return i
		}
		select {
		case <-ch:
		case <-ctx.Done():
			i, _ := t.watch.current()
			return i
		}
	}
}

// WaitFor blocks until w's index is greater than after or ctx is done, and
// returns w's index then. Changes to other views do not wake it.
func (t *Table) WaitFor(ctx context.Context, w Watch, after uint64) uint64 {
	if w == nil {
		return t.Wait(ctx, after)
	}
	cases := make([]reflect.SelectCase, 0, len(w)+1)
	for {
		t.watch.mu.Lock()
		if i := t.watch.viewIndexLocked(w); i > after {
			t.watch.mu.Unlock()
			return i
		}
		cases = append(cases[:0], reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
		for _, k := range w {
			s := t.watch.slot(k)
			ch, ok := t.watch.waiters[s]
			if !ok {
				ch = make(chan struct{})
				t.watch.waiters[s] = ch
			}
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
		}
		t.watch.mu.Unlock()
		if chosen, _, _ := reflect.Select(cases); chosen == 0 {
			return t.IndexOf(w)
		}
	}
}

// Touch grows the index for a change outside the table that queries can
// see, membership: waiters on the global index and on WatchMembers wake.
func (t *Table) Touch() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range WatchMembers {
		t.watch.mark(k)
	}
	t.watch.bump()
}

// markRecord marks the watch keys a record linked into or unlinked from
// the views changes. For a link it runs before the record is added, for an
// unlink after it is removed, so an absent list entry means the name
// appears or disappears from the topic or service list.
func (v *viewIndex) markRecord(w *watcher, e *entry) {
	switch r := e.rec.p.(type) {
	case *Broker:
		w.mark(brokerKey(r.Name))
		w.mark(WatchClusters[0])
	case unique.Handle[queueVals]:
		topic := e.topic()
		w.mark(topicKey(topic))
		if len(v.queues[topic]) == 0 {
			w.mark(WatchTopics[0])
		}
	case *Mapping:
		w.mark(topicKey(r.Topic))
	case *URL:
		w.mark(urlsKey(r.Interface, r.Category))
		if len(v.urls[r.Interface]) == 0 {
			w.mark(serviceKey(r.Interface))
			w.mark(WatchServices[0])
		}
	case *Znode:
		v.markZnode(w, r)
	}
}

// keyCount is the number of watch keys the views have, near enough to
// size the slots: a topic's route, a broker name, an interface's list and
// its two usual categories, a topic's mappings. The table's mu must be held.
func (v *viewIndex) keyCount() int {
	return len(v.queues) + len(v.brokers) + 3*len(v.urls) + len(v.mappings) + len(v.apps.instances) + len(v.apps.mapped)
}

// Overlaps reports whether a change under b's keys can wake a watch on a:
// they share a slot. Tests and benchmarks use it to pick names that are
// unrelated for this table's hash seed.
// Keys that share no slot now never will: the slot count only grows.
func (t *Table) Overlaps(a, b Watch) bool {
	t.watch.mu.Lock()
	defer t.watch.mu.Unlock()
	slots := map[uint64]bool{}
	for _, k := range a {
		slots[t.watch.slot(k)] = true
	}
	for _, k := range b {
		if slots[t.watch.slot(k)] {
			return true
		}
	}
	return false
}
