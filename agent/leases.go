package agent

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// leasesFile keeps the leases and their records across restarts (package
// lease explains the mechanism; leaselog.go how they are written).
const leasesFile = "leases.json"

const (
	// leaseSaveDelay coalesces bursts of lazy changes into one write.
	leaseSaveDelay = 100 * time.Millisecond
	// leaseSlack is how stale a saved deadline may get before a refresh
	// alone causes a write: brokers heartbeat every second.
	leaseSlack = 5 * time.Second
	// minCompact is the log size below which it is never folded into
	// the snapshot.
	minCompact = 1 << 20
)

// savedLease is a lease with its records, as restoreLeases reads them.
type savedLease struct {
	lease.Lease
	Records []routes.Record `json:"records"`
}

// leaseFileBody is leases.json: every lease as of log entry Seq, saved
// during boot Boot of the host.
type leaseFileBody struct {
	Boot   string      `json:"boot,omitempty"`
	Seq    uint64      `json:"seq,omitempty"`
	Leases []leaseBody `json:"leases"`
}

type leaseFileRead struct {
	Boot   string       `json:"boot,omitempty"`
	Seq    uint64       `json:"seq,omitempty"`
	Leases []savedLease `json:"leases"`
}

// savedState is what the files hold of one lease: its deadline, and a
// hash of its records as of our origin's seq.
type savedState struct {
	deadline time.Time
	seq      uint64
	hash     uint64
}

// leaseStore is the agent's lease table and its persistence. Without a
// data dir it only keeps the table (nothing survives a restart anyway).
type leaseStore struct {
	mu       sync.Mutex
	dir      string // "" without a data dir
	m        map[string]lease.Lease
	saved    map[string]savedState // by lease key: what the files hold
	lazy     map[string]bool       // leases whose deadline or state waits for the saver
	restored map[string][]lease.Lease
	claimed  map[string]bool
	frozen   bool // shutting down: the files stay as they are
	dirty    chan struct{}

	saveMu   sync.Mutex // one write at a time; held across reading a lease's records and writing them
	log      *leaseLog  // nil until restoreLeases opened it
	snapSize int64      // leases.json's size when last written
}

func leaseKey(door, id string) string { return door + "\x00" + id }

func newLeaseStore(dataDir string) *leaseStore {
	return &leaseStore{dir: dataDir, m: map[string]lease.Lease{}, saved: map[string]savedState{}, lazy: map[string]bool{},
		restored: map[string][]lease.Lease{}, claimed: map[string]bool{}, dirty: make(chan struct{}, 1)}
}

// PutLease records or refreshes a lease (package lease, step 1). A new
// lease, one covering other keys, or one whose records changed since it
// was saved is written before PutLease returns, so that what the door
// then acknowledges survives the agent's crash (kill -9 right after a
// registration's answer restores it): the door calls it after applying
// the records. A refresh of the deadline or state alone is saved lazily.
func (a *Agent) PutLease(l lease.Lease) {
	ls := a.leases
	k := leaseKey(l.Door, l.ID)
	ls.mu.Lock()
	old, had := ls.m[k]
	ls.m[k] = l
	if ls.dir == "" || ls.frozen {
		ls.mu.Unlock()
		return
	}
	sv, inFile := ls.saved[k]
	ls.mu.Unlock()
	cover := !inFile || !had || !old.SameCover(l)
	if cover || a.localSeq() > sv.seq {
		// New, other keys, or some record of ours changed since the
		// lease was written, maybe one of its own: written now unless
		// its records turn out the same.
		if a.writeLease(k, cover) {
			return
		}
		ls.mu.Lock()
		sv = ls.saved[k]
		ls.mu.Unlock()
	}
	if had && old.SameButDeadline(l) && l.Deadline.Sub(sv.deadline).Abs() < leaseSlack {
		return
	}
	ls.mu.Lock()
	ls.lazy[k] = true
	ls.mu.Unlock()
	select {
	case ls.dirty <- struct{}{}:
	default:
	}
}

// DropLease forgets a lease; when the files hold it, its removal is
// written before DropLease returns (package lease, step 2).
func (a *Agent) DropLease(door, id string) {
	ls := a.leases
	k := leaseKey(door, id)
	ls.mu.Lock()
	delete(ls.m, k)
	delete(ls.lazy, k)
	_, inFile := ls.saved[k]
	frozen := ls.frozen
	ls.mu.Unlock()
	if !inFile || frozen {
		return
	}
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	ls.mu.Lock()
	_, back := ls.m[k] // put again meanwhile: its own write says so
	if back || ls.frozen || ls.log == nil {
		ls.mu.Unlock()
		return
	}
	delete(ls.saved, k)
	ls.mu.Unlock()
	a.appendLeaseEntry(logEntry{Drop: &leaseRef{Door: door, ID: id}})
}

// writeLease appends lease k with its records as they are now. Unless
// force, it writes nothing when the records hash as they did when last
// written, and reports whether it wrote.
func (a *Agent) writeLease(k string, force bool) bool {
	ls := a.leases
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	ls.mu.Lock()
	l, ok := ls.m[k]
	sv, inFile := ls.saved[k]
	stop := !ok || ls.frozen || ls.log == nil
	ls.mu.Unlock()
	if stop {
		return true
	}
	// Read before the records, so what is written is at least this seq's.
	seq := a.localSeq()
	recs, err := json.Marshal(l.Records(a.table))
	if err != nil {
		a.log.Error("cannot encode a lease's records; a restart may lose them", "door", l.Door, "id", l.ID, "err", err)
		return true
	}
	h := hashBytes(recs)
	if !force && inFile && h == sv.hash {
		ls.mu.Lock()
		if _, still := ls.saved[k]; still {
			ls.saved[k] = savedState{deadline: sv.deadline, seq: seq, hash: h}
		}
		ls.mu.Unlock()
		return false
	}
	body, err := json.Marshal(leaseBody{Lease: l, Records: recs})
	if err == nil && a.appendLeaseEntry(logEntry{Put: body}) {
		ls.mu.Lock()
		ls.saved[k] = savedState{deadline: l.Deadline, seq: seq, hash: h}
		delete(ls.lazy, k)
		ls.mu.Unlock()
	}
	return true
}

// appendLeaseEntry appends e, folding the log into a new snapshot when
// it has outgrown it. saveMu held.
func (a *Agent) appendLeaseEntry(e logEntry) bool {
	ls := a.leases
	if err := ls.log.append(e); err != nil {
		a.log.Error("saving registrations to the data dir failed; a restart may lose them", "path", ls.log.f.Name(), "err", err)
		return false
	}
	if ls.log.size > max(minCompact, 2*ls.snapSize) {
		a.compactLeases()
	}
	return true
}

// compactLeases writes every lease with its records to leases.json, then
// empties the log. A crash between the two leaves log entries the
// snapshot already holds; their seq makes the next replay skip them.
// saveMu held.
func (a *Agent) compactLeases() {
	ls := a.leases
	ls.mu.Lock()
	keys := make([]string, 0, len(ls.m))
	leases := make([]lease.Lease, 0, len(ls.m))
	for k, l := range ls.m {
		keys = append(keys, k)
		leases = append(leases, l)
	}
	ls.mu.Unlock()
	seq := a.localSeq()
	body := leaseFileBody{Boot: bootID(), Seq: ls.log.seq, Leases: make([]leaseBody, len(leases))}
	saved := make(map[string]savedState, len(leases))
	for i, l := range leases {
		recs, err := json.Marshal(l.Records(a.table))
		if err != nil {
			a.log.Error("cannot encode a lease's records; a restart may lose them", "door", l.Door, "id", l.ID, "err", err)
			continue
		}
		body.Leases[i] = leaseBody{Lease: l, Records: recs}
		saved[keys[i]] = savedState{deadline: l.Deadline, seq: seq, hash: hashBytes(recs)}
	}
	path := filepath.Join(ls.dir, leasesFile)
	b, err := json.Marshal(body)
	if err == nil {
		err = replaceFile(path, b, false)
	}
	if err == nil {
		err = ls.log.reset()
	}
	if err != nil {
		a.log.Error("saving registrations to the data dir failed; a restart may lose them", "path", path, "err", err)
		return
	}
	ls.mu.Lock()
	ls.saved = saved
	ls.lazy = map[string]bool{}
	ls.snapSize = int64(len(b))
	ls.mu.Unlock()
}

func hashBytes(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// localSeq is our origin's seq in the table: it advances with every change
// of our own records.
func (a *Agent) localSeq() uint64 {
	e, _ := a.table.Entry(a.cfg.NodeName)
	return e.Seq
}

// RestoredLeases hands a door the leases restored at start (package lease,
// step 3). A second call returns nothing.
func (a *Agent) RestoredLeases(door string) []lease.Lease {
	ls := a.leases
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.claimed[door] = true
	out := ls.restored[door]
	delete(ls.restored, door)
	return out
}

// readSavedLeases folds leases.json and the log after it into the leases
// they hold, in the order they were written. good and seq are where the
// log's intact part ends.
func readSavedLeases(dir string) (leases []savedLease, boot string, good int64, seq uint64, err error) {
	var body leaseFileRead
	b, err := os.ReadFile(filepath.Join(dir, leasesFile))
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &body); err != nil {
			return nil, "", 0, 0, fmt.Errorf("%s: %w", leasesFile, err)
		}
	case !os.IsNotExist(err):
		return nil, "", 0, 0, err
	}
	entries, good, seq, err := readLeaseLog(filepath.Join(dir, leaseLogFile), body.Seq)
	if err != nil {
		return nil, "", 0, 0, err
	}
	byKey := map[string]int{}
	for i, sl := range body.Leases {
		byKey[leaseKey(sl.Door, sl.ID)] = i
	}
	leases = body.Leases
	for _, e := range entries {
		switch {
		case e.Put != nil:
			var sl savedLease
			if err := json.Unmarshal(e.Put, &sl); err != nil {
				return nil, "", 0, 0, fmt.Errorf("%s entry %d: %w", leaseLogFile, e.Seq, err)
			}
			k := leaseKey(sl.Door, sl.ID)
			if i, ok := byKey[k]; ok {
				leases[i] = sl
			} else {
				byKey[k] = len(leases)
				leases = append(leases, sl)
			}
		case e.Drop != nil:
			if i, ok := byKey[leaseKey(e.Drop.Door, e.Drop.ID)]; ok {
				leases[i].Door = "" // dropped; skipped below
			}
		}
	}
	out := leases[:0]
	for _, sl := range leases {
		if sl.Door != "" {
			out = append(out, sl)
		}
	}
	return out, body.Boot, good, seq, nil
}

// restoreLeases republishes, at start and before anything is served, the
// records of every saved lease that has not expired, under the new
// incarnation, then writes them as a new snapshot. It returns the delta
// to publish once gossip runs.
func (a *Agent) restoreLeases() routes.Delta {
	ls := a.leases
	if ls.dir == "" {
		return routes.Delta{}
	}
	saved, boot, good, seq, err := readSavedLeases(ls.dir)
	if err != nil {
		a.log.Warn("saved leases are unreadable; setting them aside", "dir", ls.dir, "err", err)
		for _, f := range []string{leasesFile, leaseLogFile} {
			_ = os.Rename(filepath.Join(ls.dir, f), filepath.Join(ls.dir, f+".corrupt"))
		}
		saved, good, seq = nil, 0, 0
	}
	logPath := filepath.Join(ls.dir, leaseLogFile)
	if st, err := os.Stat(logPath); err == nil && st.Size() > good {
		a.log.Warn("the lease log ends in an unreadable entry (the agent died while writing it, or the file was damaged); restoring what is before it",
			"path", logPath, "ignored_bytes", st.Size()-good)
	}
	log, err := openLeaseLog(logPath, good, seq)
	if err != nil {
		a.log.Error("cannot open the lease log; registrations will not survive a restart", "dir", ls.dir, "err", err)
		return routes.Delta{}
	}
	rebooted := boot != "" && boot != bootID()
	now := time.Now()
	var puts []routes.Record
	kept, expired, gone := 0, 0, 0
	ls.mu.Lock()
	for _, sl := range saved {
		switch {
		case sl.Expired(now):
			expired++
			continue
		case rebooted && !sl.Deadline.IsZero():
			gone++
			continue
		}
		kept++
		for _, r := range sl.Records {
			if k := r.Key(); k != "" && sl.Covers(k) {
				puts = append(puts, r)
			}
		}
		ls.m[leaseKey(sl.Door, sl.ID)] = sl.Lease
		ls.restored[sl.Door] = append(ls.restored[sl.Door], sl.Lease)
	}
	ls.mu.Unlock()
	if gone > 0 {
		a.log.Warn("the host restarted since the registrations were saved: the clients that held them are gone, so they are not restored",
			"leases", gone)
	}
	d, _ := a.table.ApplyLocal(puts, nil)
	ls.saveMu.Lock()
	ls.log = log
	a.compactLeases()
	ls.saveMu.Unlock()
	a.log.Info("restored registrations from the data dir", "leases", kept, "expired", expired, "records", len(d.Ops))
	return d
}

// dropUnclaimed withdraws the records of restored leases no door took back
// (the door is off after the restart).
func (a *Agent) dropUnclaimed() {
	ls := a.leases
	ls.mu.Lock()
	var orphans []lease.Lease
	for door, ls2 := range ls.restored {
		if !ls.claimed[door] {
			orphans = append(orphans, ls2...)
		}
	}
	ls.restored = map[string][]lease.Lease{}
	ls.mu.Unlock()
	if len(orphans) == 0 {
		return
	}
	a.regMu.Lock()
	defer a.regMu.Unlock()
	var deletes []string
	for _, l := range orphans {
		a.DropLease(l.Door, l.ID)
		for _, r := range l.Records(a.table) {
			deletes = append(deletes, r.Key())
		}
		a.log.Warn("withdrawing a restored registration no door claims (is the door off now?)", "door", l.Door, "id", l.ID)
	}
	a.apply(nil, deletes)
}

// saveLeasesLoop writes the leases whose deadline or state changed,
// coalescing bursts.
func (a *Agent) saveLeasesLoop() {
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-a.leases.dirty:
		}
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(leaseSaveDelay):
		}
		a.saveLazyLeases()
	}
}

func (a *Agent) saveLazyLeases() {
	ls := a.leases
	ls.mu.Lock()
	keys := make([]string, 0, len(ls.lazy))
	for k := range ls.lazy {
		keys = append(keys, k)
	}
	ls.mu.Unlock()
	for _, k := range keys {
		a.writeLease(k, true)
	}
}

// freezeLeases writes a last snapshot and stops saving: what the doors do
// while the agent shuts down (closing connections) must not reach the
// files. forget empties them instead: the agent is leaving for good.
func (a *Agent) freezeLeases(forget bool) {
	ls := a.leases
	if ls == nil || ls.dir == "" {
		return
	}
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	ls.mu.Lock()
	if forget {
		ls.m = map[string]lease.Lease{}
	}
	frozen := ls.frozen
	ls.frozen = true
	ls.mu.Unlock()
	if frozen || ls.log == nil {
		return
	}
	a.compactLeases()
	if err := ls.log.close(); err != nil {
		a.log.Error("closing the lease log", "err", err)
	}
}
