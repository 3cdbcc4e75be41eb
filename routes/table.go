package routes

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unique"
)

// maxTombstones (a var so tests can make collection happen) bounds the deletes remembered per origin. Past it the oldest
// half is forgotten and the origin's floor rises: a late op at or below the
// floor is refused, and the digest hash, which then differs from the
// origin's, makes anti-entropy fetch the authoritative snapshot.
var maxTombstones = 4096

// Op is one change to one key of an origin. Rec nil means delete.
type Op struct {
	Key string  `json:"k"`
	Seq uint64  `json:"s"`
	Rec *Record `json:"r,omitempty"`
	// Writer is set on rule ops only (see rules.go): the agent that wrote
	// the rule, breaking ties between equal rule times (hlc.go).
	Writer string `json:"w,omitempty"`
}

// Delta is a batch of ops of one origin incarnation.
type Delta struct {
	Origin string `json:"o"`
	Inc    uint64 `json:"i"`
	Ops    []Op   `json:"ops"`
}

// Snapshot is everything a replica holds of one origin: live records and
// tombstones as ops, and the highest seq it has seen. Authoritative marks a
// snapshot made by the origin itself. A part of a split snapshot (Split)
// covers only the keys in [Lo, Hi); empty bounds are open.
type Snapshot struct {
	Origin        string `json:"o"`
	Inc           uint64 `json:"i"`
	Seq           uint64 `json:"s"`
	Authoritative bool   `json:"a,omitempty"`
	Lo            string `json:"lo,omitempty"`
	Hi            string `json:"hi,omitempty"`
	Ops           []Op   `json:"ops"`
}

// Result counts what Apply or Merge did with the ops it was given.
type Result struct {
	Applied int // changed the table
	Stale   int // older than what the table holds, or a dead incarnation
	Invalid int // malformed: wrong key, not exactly one field, bad names
	// Refused: the origin's records passed the budget and were dropped
	// (receive.go); RefusedUsage is what they would have held.
	Refused      bool
	RefusedUsage Usage
}

type tomb struct {
	seq    uint64
	writer string
	at     time.Time // when this replica learned of the delete
}

// newer orders writes to one key: by seq (a hybrid logical time for rules), then
// by writer name, so every replica picks the same winner.
func newer(seq uint64, writer string, thanSeq uint64, thanWriter string) bool {
	return seq > thanSeq || (seq == thanSeq && writer > thanWriter)
}

type originState struct {
	name unique.Handle[string] // every entry's origin
	inc  uint64
	// retired are the previous incarnation's records, still served (still
	// linked in the views) until this incarnation writes their key or its
	// own snapshot arrives: a restarted agent republishes what it carried,
	// and peers must go from the old records to the new without a moment
	// holding neither (retire.go).
	retired map[string]*entry
	// prev is the previous incarnation as it was when this one retired
	// it, its records and tombstones, kept for Remember until this
	// incarnation's own snapshot settles every key (remember.go).
	prev  *originState
	seq   uint64 // highest seq seen (the next local op's seq minus one, for ourselves)
	bytes int64  // the live records' RecordSize, summed (budget.go)
	floor uint64 // ops at or below it are covered by a snapshot or forgotten tombstones
	hash  uint64
	live  liveSet
	tombs map[string]tomb
	// writers are live keys' non-empty writers (the agent that wrote a
	// rule, which breaks ties between rules written at the same time); nil
	// until one. Only rules have one, and a field in every entry would cost
	// every record of every origin 16 bytes.
	writers map[string]string
	// clearOK says every live key lies in one of the claimed ranges,
	// each filled by one part of the origin's own snapshot (a new state
	// has no key and no range). A part of the origin's own snapshot whose
	// range overlaps none of them held no live key before it is merged,
	// so there is nothing to remove besides what it lists: Merge skips
	// the scan of every live key (mergeFastPath). Any other put ends it.
	clearOK bool
	claimed []keyRange
	// keys are the live keys in order, for the scan of an authoritative
	// part's range (unlisted): without them a re-pull of an origin in P
	// parts would scan all K live keys P times.
	// Built by the first scan that needs it and dropped after the part
	// that ends the key space; keys put since are in added (keys deleted
	// since are skipped by a lookup). nil when not built.
	keys  []string
	added []string
	// groups index the local origin's records by key prefix for
	// LocalRecords (localgroups.go); nil for every other origin.
	groups localGroups
	// refused is set while the origin's records are refused for passing
	// the budget (receive.go).
	refused *refusal
}

// keyRange is [lo, hi); an empty hi is open.
type keyRange struct{ lo, hi string }

func (r keyRange) overlaps(o keyRange) bool {
	return (r.hi == "" || o.lo < r.hi) && (o.hi == "" || r.lo < o.hi)
}

// unclaimed reports whether r overlaps none of the claimed ranges, and
// clearOK holds.
func (st *originState) unclaimed(r keyRange) bool {
	if !st.clearOK || (r.hi != "" && r.hi <= r.lo) {
		return false
	}
	for _, c := range st.claimed {
		if c.overlaps(r) {
			return false
		}
	}
	return true
}

// mergeFastPath lets Merge skip the scan for unlisted keys where clearOK
// shows there are none; tests turn it off to compare with the full path.
var mergeFastPath = true

// writer is the writer of live key k, "" if none.
func (st *originState) writer(k string) string { return st.writers[k] }

func newOriginState(origin string, inc uint64) *originState {
	return &originState{name: unique.Make(origin), inc: inc, tombs: map[string]tomb{}, clearOK: true}
}

// Table is the replicated route table of one agent.
type Table struct {
	mu      sync.RWMutex
	local   string
	origins map[string]*originState
	views   viewIndex
	watch   watcher
	// ruleClock orders rule writes cluster-wide (hlc.go).
	ruleClock uint64
	now       func() time.Time // rule times; stamps rule tombstones for collection
	stamps    lamportClock     // orders registrations cluster-wide (Broker, URL and Znode Stamp; recency.go)
	// floors refuse, per origin, every incarnation at or below the value:
	// those that died or were superseded (floor.go).
	floors map[string]uint64
	// gone are origins dropped (their agent died), as they were, for
	// Remember when the agent comes back (remember.go).
	gone map[string]goneOrigin
	// onChange hears the key of every record that appears, changes or
	// goes (OnChange).
	onChange []func(key string)
	// lastQueue saves interning a queue record's numbers again when they
	// are the last record's (stored.go).
	lastQueue lastQueue
	// budget bounds what the table holds of every other origin
	// (receive.go).
	budget Budget
	// keys are the caller's copies of the keys of an ApplyLocalWithin
	// under way (budget.go); nil otherwise.
	keys map[string]string
}

// NewTable returns an empty table for the agent named local, whose own
// records carry incarnation inc. inc must grow across restarts of the same
// agent name (the start time in ns, or a counter kept in the data dir).
func NewTable(local string, inc uint64) *Table {
	t := &Table{local: local, origins: map[string]*originState{}, views: newViewIndex(), now: time.Now,
		floors: map[string]uint64{}, gone: map[string]goneOrigin{}}
	t.origins[local] = newOriginState(local, inc)
	t.origins[local].groups = localGroups{}
	t.origins[RulesOrigin] = newOriginState(RulesOrigin, 0)
	t.watch.init()
	t.views.watch = &t.watch
	t.watch.keys = t.views.keyCount
	return t
}

// Local is the name of this table's own origin.
func (t *Table) Local() string { return t.local }

// ApplyLocal changes this agent's own records: puts replace or add, deletes
// remove. Only real changes become ops, so re-registering the same content
// costs nothing and returns ok false. A broker put without a stamp, and
// a queue put that is not a copy, are stamped here (recency.go).
func (t *Table) ApplyLocal(puts []Record, deletes []string) (d Delta, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.applyLocalLocked(puts, deletes)
}

// applyLocalLocked is ApplyLocal with t.mu held.
func (t *Table) applyLocalLocked(puts []Record, deletes []string) (d Delta, ok bool) {
	st := t.origins[t.local]
	d = Delta{Origin: t.local, Inc: st.inc}
	var tick uint64 // one new stamp for the call's queue data (recency.go)
	for _, r := range puts {
		key := r.Key()
		if key == "" {
			continue
		}
		if k, ok := t.keys[key]; ok {
			key = k // the caller's copy, not a new one (budget.go)
		} else if e, ok := st.live.get(key); ok {
			key = e.key // the same bytes as the record it replaces
		}
		switch {
		case r.Broker != nil:
			r = r.clone() // the caller's record is not ours to stamp
			t.stampLocal(st, key, r.Broker)
		case r.Queue != nil && r.Queue.Stamp == 0 && !r.Queue.Copy:
			r = r.clone()
			t.stampQueueLocked(r.Queue, &tick)
		}
		if e, ok := st.live.get(key); ok && e.equal(r) {
			continue
		}
		rec := r.clone()
		if s := rec.stamp(); s > 0 { // a record restored from a lease keeps its stamp
			t.stamps.witness(s)
		}
		op := Op{Key: key, Seq: st.seq + 1, Rec: &rec}
		t.applyOp(t.local, st, op)
		d.Ops = append(d.Ops, op)
	}
	for _, key := range deletes {
		if _, ok := st.live.get(key); !ok {
			continue
		}
		op := Op{Key: key, Seq: st.seq + 1}
		t.applyOp(t.local, st, op)
		d.Ops = append(d.Ops, op)
	}
	if len(d.Ops) > 0 {
		t.watch.bump()
	}
	return d, len(d.Ops) > 0
}

// LocalRecord returns this agent's own record at exactly key.
func (t *Table) LocalRecord(key string) (Record, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	e, ok := t.origins[t.local].live.get(key)
	if !ok {
		return Record{}, false
	}
	return e.clone(), true
}

// LocalRecords returns this agent's own records whose key starts with
// prefix. A prefix of a whole group (kind/name/: a broker's queues, its
// ids, its mappings) reads only that group's records; any other scans
// every record of the agent.
func (t *Table) LocalRecords(prefix string) []Record {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st := t.origins[t.local]
	set := &st.live
	if prefix != "" && groupOf(prefix) == prefix {
		set = st.groups[prefix]
		if set == nil {
			return nil
		}
	}
	var es []*entry
	for k, e := range set.all() {
		if strings.HasPrefix(k, prefix) {
			es = append(es, e)
		}
	}
	// By the entries' keys: Record.Key builds its string on each call.
	slices.SortFunc(es, func(a, b *entry) int { return strings.Compare(a.key, b.key) })
	var out []Record
	if len(es) > 0 {
		out = make([]Record, len(es))
	}
	for i, e := range es {
		out[i] = e.clone()
	}
	return out
}

// Apply applies a remote delta. Deltas about this table's own origin are
// ignored: nobody else may change them.
func (t *Table) Apply(d Delta) Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	var res Result
	st := t.stateFor(d.Origin, d.Inc, &res, len(d.Ops))
	if st == nil {
		return res
	}
	if st.refused != nil {
		res.Stale += len(d.Ops) // pulled again once past the refusal (receive.go)
		return res
	}
	for _, op := range d.Ops {
		t.countOp(&res, t.applyChecked(d.Origin, st, op, true))
	}
	if res.Applied > 0 {
		t.watch.bump()
		t.refuseIfOverInto(&res, d.Origin, st, false)
	}
	return res
}

// refuseIfOverInto is refuseIfOver, noted in res.
func (t *Table) refuseIfOverInto(res *Result, origin string, st *originState, truth bool) {
	if t.refuseIfOver(origin, st, truth) {
		res.Refused, res.RefusedUsage = true, st.refused.usage
	}
}

// Merge folds a snapshot into the table. Per key it behaves like Apply; an
// authoritative snapshot (made by the origin) also removes live keys it does
// not list but covers (in its key range, seq at or below its own), whose
// deletes this replica missed and can no longer learn from a tombstone.
func (t *Table) Merge(s Snapshot) Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	var res Result
	st := t.stateFor(s.Origin, s.Inc, &res, len(s.Ops))
	if st == nil {
		return res
	}
	if !st.admitSnapshot(s) {
		res.Stale += len(s.Ops)
		return res
	}
	// Only an authoritative snapshot removes what it does not list; a
	// replica's needs no set of its keys. Neither does one whose range
	// held no live key before it (unclaimed): a joiner's first copy of
	// an origin, where the scan below, of every live key of the origin
	// for each part, cost the P4 joiner as much CPU as decoding. Its parts
	// arrive in several messages, each merged on its own goroutine, so
	// in any order.
	r := keyRange{s.Lo, s.Hi}
	fresh := mergeFastPath && s.Authoritative && st.unclaimed(r)
	claimed := st.claimed
	var listed map[string]bool
	if s.Authoritative && !fresh {
		listed = make(map[string]bool, len(s.Ops))
	}
	within := true // every put of this snapshot is in its range
	for _, op := range s.Ops {
		if listed != nil {
			listed[op.Key] = true
		}
		if op.Rec != nil && !s.Covers(op.Key) {
			within = false
		}
		if s.Authoritative {
			t.countOp(&res, t.applyTruth(s.Origin, st, op, s.Seq))
			continue
		}
		t.countOp(&res, t.applyChecked(s.Origin, st, op, true))
	}
	if fresh && within {
		// Its puts (which ended clearOK) all lie in its range.
		st.clearOK, st.claimed = true, append(claimed, r)
	}
	if s.Authoritative {
		var gone []string // the live set must not change while it is read
		if !fresh {
			gone = st.unlisted(s, listed)
		}
		if s.Hi == "" {
			st.keys, st.added = nil, nil // a re-pull's last part, usually
			st.prev = nil
			delete(t.gone, s.Origin)
		}
		for _, k := range gone {
			t.applyOp(s.Origin, st, Op{Key: k, Seq: s.Seq})
			res.Applied++
		}
		st.floor = max(st.floor, s.Seq)
		// The origin's word on this incarnation: what it did not
		// republish of the last one (in this part's range) is gone.
		for k := range st.retired {
			if s.Covers(k) {
				t.unretire(st, k)
				res.Applied++
			}
		}
	}
	st.seq = max(st.seq, s.Seq)
	if res.Applied > 0 {
		t.watch.bump()
	}
	t.refuseIfOverInto(&res, s.Origin, st, s.Authoritative && st.seq == s.Seq)
	return res
}

// Snapshot returns what this table holds of origin, ok false if nothing.
func (t *Table) Snapshot(origin string) (Snapshot, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st, ok := t.origins[origin]
	if !ok {
		return Snapshot{}, false
	}
	s := Snapshot{Origin: origin, Inc: st.inc, Seq: st.seq, Authoritative: origin == t.local,
		Ops: make([]Op, 0, st.live.len()+len(st.tombs))}
	for k, e := range st.live.all() {
		rec := e.clone()
		s.Ops = append(s.Ops, Op{Key: k, Seq: e.seq, Rec: &rec, Writer: st.writer(k)})
	}
	for k, tb := range st.tombs {
		s.Ops = append(s.Ops, Op{Key: k, Seq: tb.seq, Writer: tb.writer})
	}
	return s, true
}

// Origins lists the origins the table holds, sorted.
func (t *Table) Origins() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]string, 0, len(t.origins))
	for o := range t.origins {
		out = append(out, o)
	}
	sort.Strings(out)
	return out
}

// stateFor returns origin's state ready to take ops of incarnation inc,
// resetting it when inc is newer, or nil (counting n stale ops) when inc is
// older or the origin is our own.
func (t *Table) stateFor(origin string, inc uint64, res *Result, n int) *originState {
	if origin == t.local || origin == "" {
		res.Stale += n
		return nil
	}
	if f, dead := t.floors[origin]; dead && inc <= f {
		res.Stale += n
		return nil
	}
	st, ok := t.origins[origin]
	switch {
	case !ok:
		st = newOriginState(origin, inc)
		t.origins[origin] = st
	case inc < st.inc:
		res.Stale += n
		return nil
	case inc > st.inc:
		st = t.retire(origin, st, inc)
	}
	return st
}

type opOutcome int

const (
	opApplied opOutcome = iota
	opStale
	opInvalid
)

func (t *Table) countOp(res *Result, o opOutcome) {
	switch o {
	case opApplied:
		res.Applied++
	case opStale:
		res.Stale++
	default:
		res.Invalid++
	}
}

// applyChecked validates a remote op, then applies it if it is newer than
// what the table holds for its key (and, with useFloor, above the floor).
func (t *Table) applyChecked(origin string, st *originState, op Op, useFloor bool) opOutcome {
	if op.Seq == 0 || (op.Rec != nil && (!op.Rec.valid() || !op.Rec.keyIs(op.Key))) || op.Key == "" ||
		(origin == RulesOrigin) != (op.Writer != "") {
		return opInvalid
	}
	if origin == RulesOrigin {
		t.witnessRuleTime(op.Seq)
	}
	if op.Rec != nil && op.Rec.stamp() > 0 {
		t.stamps.witness(op.Rec.stamp())
	}
	if useFloor && op.Seq <= st.floor {
		return opStale
	}
	old, live := st.live.get(op.Key)
	if live && !newer(op.Seq, op.Writer, old.seq, st.writer(op.Key)) {
		st.seq = max(st.seq, op.Seq)
		return opStale
	}
	if tb, ok := st.tombs[op.Key]; ok && !newer(op.Seq, op.Writer, tb.seq, tb.writer) {
		st.seq = max(st.seq, op.Seq)
		return opStale
	}
	t.applyLooked(origin, st, op, old, live)
	return opApplied
}

// applyTruth applies an op of the origin's own snapshot at seq: the truth
// about its key as of seq. So the floor, which guards against replicas
// that forgot a tombstone, does not apply, and what this replica holds of
// the key at or below seq is replaced by it when it differs, even where
// per key it looks newer: a replica can hold another op at a seq the
// origin holds no op of the key at (an op lost and another taken in its
// place, a seq given twice), and comparing seqs would keep it forever,
// the digest showing the same seq with another hash to every anti-entropy
// round. Only what the replica holds above seq, which the origin wrote
// after its snapshot, is kept.
func (t *Table) applyTruth(origin string, st *originState, op Op, seq uint64) opOutcome {
	if op.Seq > seq {
		return t.applyChecked(origin, st, op, false) // not the snapshot's truth: an op like any
	}
	if op.Seq == 0 || (op.Rec != nil && (!op.Rec.valid() || !op.Rec.keyIs(op.Key))) || op.Key == "" ||
		(origin == RulesOrigin) != (op.Writer != "") {
		return opInvalid
	}
	if op.Rec != nil && op.Rec.stamp() > 0 {
		t.stamps.witness(op.Rec.stamp())
	}
	old, live := st.live.get(op.Key)
	tb, tombed := st.tombs[op.Key]
	switch {
	case live && old.seq > seq, tombed && tb.seq > seq:
		return opStale // written after the snapshot
	case op.Rec == nil && !live && tombed:
		return opStale // deleted either way; tombstones count in no hash
	case op.Rec != nil && live && old.seq == op.Seq && st.writer(op.Key) == op.Writer:
		// The same op: one seq is one op of the origin. (Two contents at
		// one (key, seq) would not show in the digest either: its hash
		// is of keys and seqs.)
		return opStale
	}
	t.applyLooked(origin, st, op, old, live)
	return opApplied
}

// applyOp writes an op known to be newest for its key.
func (t *Table) applyOp(origin string, st *originState, op Op) {
	old, live := st.live.get(op.Key)
	t.applyLooked(origin, st, op, old, live)
}

// applyLooked is applyOp with the key's live entry already looked up
// (live false: none): a joiner merging 100,100 records looked each up
// twice.
func (t *Table) applyLooked(origin string, st *originState, op Op, old *entry, live bool) {
	if live {
		st.hash ^= pairHash(op.Key, st.writer(op.Key), old.seq)
		t.views.unlink(old)
		st.live.del(op.Key)
		st.bytes -= old.size()
		if st.groups != nil {
			st.groups.del(op.Key)
		}
		delete(st.writers, op.Key)
		t.changed(op.Key)
	}
	delete(st.tombs, op.Key)
	t.unretire(st, op.Key)
	if op.Rec != nil {
		st.clearOK, st.claimed = false, nil
		e := &entry{key: op.Key, seq: op.Seq, origin: st.name, rec: store(op.Key, *op.Rec, &t.lastQueue)}
		st.live.put(e)
		st.bytes += e.size()
		if st.groups != nil {
			st.groups.put(e)
		}
		if !live { // a key live before is in the index already
			st.noteAdded(op.Key)
		}
		if op.Writer != "" {
			if st.writers == nil {
				st.writers = map[string]string{}
			}
			st.writers[op.Key] = op.Writer
		}
		st.hash ^= pairHash(op.Key, op.Writer, op.Seq)
		t.views.link(e)
		t.changed(op.Key)
	} else {
		st.tombs[op.Key] = tomb{seq: op.Seq, writer: op.Writer, at: t.now()}
		// Rules' tombstones are collected by age (CollectRuleTombstones):
		// a floor would refuse older writes that must still win by clock.
		if len(st.tombs) > maxTombstones && origin != RulesOrigin {
			st.forgetOldTombs()
		}
	}
	st.seq = max(st.seq, op.Seq)
}

func (st *originState) forgetOldTombs() {
	seqs := make([]uint64, 0, len(st.tombs))
	for _, tb := range st.tombs {
		seqs = append(seqs, tb.seq)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	cut := seqs[len(seqs)/2]
	for k, tb := range st.tombs {
		if tb.seq <= cut {
			delete(st.tombs, k)
		}
	}
	st.floor = max(st.floor, cut)
}

// Len counts the origins and live records the table holds.
func (t *Table) Len() (origins, records int) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, st := range t.origins {
		records += st.live.len()
	}
	return len(t.origins), records
}

// LocalInc is the incarnation of this table's own records.
func (t *Table) LocalInc() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.origins[t.local].inc
}

// Reincarnate moves this table's own records to the incarnation after
// above, if above is at or past the current one (a previous run of this
// agent had it), and returns the incarnation now in use. The records stay;
// replicas take them over the old run's at the new incarnation's first
// op or snapshot.
func (t *Table) Reincarnate(above uint64) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.origins[t.local]
	if above <= st.inc || above == ^uint64(0) {
		return st.inc, false
	}
	st.inc = above + 1
	t.watch.bump()
	return st.inc, true
}
