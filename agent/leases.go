package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// leasesFile keeps the leases and their records across restarts (package
// lease explains the mechanism).
const leasesFile = "leases.json"

const (
	// leaseSaveDelay coalesces bursts of changes into one write.
	leaseSaveDelay = 100 * time.Millisecond
	// leaseSlack is how stale a saved deadline may get before a refresh
	// alone causes a write: brokers heartbeat every second.
	leaseSlack = 5 * time.Second
)

type savedLease struct {
	lease.Lease
	Records []routes.Record `json:"records"`
}

type leaseFileBody struct {
	Leases []savedLease `json:"leases"`
}

// leaseStore is the agent's lease table and its persistence. Without a
// data dir it only keeps the table (nothing survives a restart anyway).
type leaseStore struct {
	mu       sync.Mutex
	path     string // "" without a data dir
	m        map[string]lease.Lease
	saved    map[string]time.Time // lease key -> deadline in the file
	restored map[string][]lease.Lease
	claimed  map[string]bool
	frozen   bool // shutting down: the file stays as it is
	dirty    chan struct{}
	// gen counts the changes a client must not see acknowledged before
	// they are in the file (a lease added, dropped or covering other
	// keys); savedGen and savedSeq are the gen and our origin's seq (every
	// change of our records advances it) that the file reflects.
	gen, savedGen, savedSeq uint64

	saveMu sync.Mutex // one write at a time
}

func leaseKey(door, id string) string { return door + "\x00" + id }

func newLeaseStore(dataDir string) *leaseStore {
	ls := &leaseStore{m: map[string]lease.Lease{}, saved: map[string]time.Time{},
		restored: map[string][]lease.Lease{}, claimed: map[string]bool{}, dirty: make(chan struct{}, 1)}
	if dataDir != "" {
		ls.path = filepath.Join(dataDir, leasesFile)
	}
	return ls
}

// PutLease records or refreshes a lease (package lease, step 1). A new
// lease, one covering other keys, or any change of our records since the
// last save is written before PutLease returns, so that what the door then
// acknowledges survives a crash (kill -9 right after a registration's
// answer restores it): the door calls it after applying the records. A
// refresh of the deadline or state alone is saved lazily.
func (a *Agent) PutLease(l lease.Lease) {
	ls := a.leases
	ls.mu.Lock()
	k := leaseKey(l.Door, l.ID)
	old, had := ls.m[k]
	ls.m[k] = l
	if ls.path == "" || ls.frozen {
		ls.mu.Unlock()
		return
	}
	if !had || !old.SameCover(l) {
		ls.gen++
	}
	gen, savedGen, savedSeq := ls.gen, ls.savedGen, ls.savedSeq
	onlyDeadline := had && old.SameButDeadline(l)
	savedAt, inFile := ls.saved[k]
	ls.mu.Unlock()
	if seq := a.localSeq(); gen > savedGen || seq > savedSeq {
		a.saveLeasesThrough(gen, seq)
		return
	}
	if onlyDeadline && inFile && l.Deadline.Sub(savedAt).Abs() < leaseSlack {
		return
	}
	select {
	case ls.dirty <- struct{}{}:
	default:
	}
}

// DropLease forgets a lease; when the file holds it, the file is rewritten
// before DropLease returns (package lease, step 2).
func (a *Agent) DropLease(door, id string) {
	ls := a.leases
	ls.mu.Lock()
	k := leaseKey(door, id)
	delete(ls.m, k)
	_, inFile := ls.saved[k]
	frozen := ls.frozen
	ls.gen++
	gen := ls.gen
	ls.mu.Unlock()
	if inFile && !frozen {
		a.saveLeasesThrough(gen, 0)
	}
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

// restoreLeases republishes, at start and before anything is served, the
// records of every saved lease that has not expired, under the new
// incarnation. It returns the delta to publish once gossip runs.
func (a *Agent) restoreLeases() routes.Delta {
	ls := a.leases
	if ls.path == "" {
		return routes.Delta{}
	}
	b, err := os.ReadFile(ls.path)
	if err != nil {
		if !os.IsNotExist(err) {
			a.log.Warn("cannot read the saved leases; starting without them", "path", ls.path, "err", err)
		}
		return routes.Delta{}
	}
	var body leaseFileBody
	if err := json.Unmarshal(b, &body); err != nil {
		a.log.Warn("saved leases are unreadable; setting the file aside", "path", ls.path, "err", err)
		_ = os.Rename(ls.path, ls.path+".corrupt")
		return routes.Delta{}
	}
	now := time.Now()
	var puts []routes.Record
	kept, expired := 0, 0
	ls.mu.Lock()
	for _, sl := range body.Leases {
		if sl.Expired(now) {
			expired++
			continue
		}
		kept++
		for _, r := range sl.Records {
			if k := r.Key(); k != "" && sl.Covers(k) {
				puts = append(puts, r)
			}
		}
		k := leaseKey(sl.Door, sl.ID)
		ls.m[k] = sl.Lease
		ls.saved[k] = sl.Deadline
		ls.restored[sl.Door] = append(ls.restored[sl.Door], sl.Lease)
	}
	ls.mu.Unlock()
	d, _ := a.table.ApplyLocal(puts, nil)
	seq := a.localSeq()
	ls.mu.Lock()
	ls.savedSeq = seq // the file holds what was just republished
	ls.mu.Unlock()
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

// saveLeasesLoop writes the leases when they change, coalescing bursts.
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
		a.saveLeases()
	}
}

// saveLeases writes every lease with the records it covers now.
func (a *Agent) saveLeases() { a.saveLeasesThrough(^uint64(0), ^uint64(0)) }

// saveLeasesThrough writes every lease with the records it covers now,
// unless a write that began after lease change gen and record change seq
// has already been made: callers that queued behind one write share it.
func (a *Agent) saveLeasesThrough(gen, seq uint64) {
	ls := a.leases
	if ls.path == "" {
		return
	}
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	ls.mu.Lock()
	if ls.frozen || ls.savedGen >= gen && ls.savedSeq >= seq {
		ls.mu.Unlock()
		return
	}
	body := leaseFileBody{Leases: make([]savedLease, 0, len(ls.m))}
	saved := make(map[string]time.Time, len(ls.m))
	for k, l := range ls.m {
		body.Leases = append(body.Leases, savedLease{Lease: l})
		saved[k] = l.Deadline
	}
	nowGen := ls.gen
	ls.mu.Unlock()
	// Read before the records, so the file holds at least this seq's.
	nowSeq := a.localSeq()
	for i := range body.Leases {
		body.Leases[i].Records = body.Leases[i].Lease.Records(a.table)
	}
	b, err := json.Marshal(body)
	if err == nil {
		err = writeFileAtomic(ls.path, b)
	}
	if err != nil {
		a.log.Error("saving registrations to the data dir failed; a restart may lose them", "path", ls.path, "err", err)
		return
	}
	ls.mu.Lock()
	ls.saved, ls.savedGen, ls.savedSeq = saved, nowGen, nowSeq
	ls.mu.Unlock()
}

// freezeLeases makes a last save and stops saving: what the doors do while
// the agent shuts down (closing connections) must not reach the file.
// forget empties the file instead: the agent is leaving for good.
func (a *Agent) freezeLeases(forget bool) {
	ls := a.leases
	if ls == nil || ls.path == "" {
		return
	}
	if forget {
		ls.mu.Lock()
		ls.m = map[string]lease.Lease{}
		ls.mu.Unlock()
	}
	a.saveLeases()
	ls.mu.Lock()
	ls.frozen = true
	ls.mu.Unlock()
}
