package lease

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/namecast/namecast/internal/atomicfile"
	"github.com/namecast/namecast/internal/sealed"
	"github.com/namecast/namecast/internal/wal"
	"github.com/namecast/namecast/routes"
)

// leasesFile keeps the leases and their records across restarts (the
// package comment explains the mechanism; log.go how they are written).
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
	Lease
	Records []routes.Record `json:"records"`
	boot    string          // the boot of the host it was written in
	// Inc and At: where its records were written from (settle.go).
	Inc uint64 `json:"inc,omitempty"`
	At  uint64 `json:"at,omitempty"`
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
	wseq     uint64 // the log entry that wrote it (0: a snapshot), maybe not on disk yet
	// edited: the lease's records change only through edits (Write), so
	// the files hold them as the table does (hash is not kept), and a
	// refresh is saved as an edit naming no record (writeRefresh).
	edited bool
}

// Store is an agent's lease table and its persistence; it is the Holder
// the agent hands its doors. Without a data dir it only keeps the table
// (nothing survives a restart anyway).
type Store struct {
	table  *routes.Table // the agent's; a lease's records are its local ones
	logger *slog.Logger

	mu       sync.Mutex
	dir      string                         // "" without a data dir
	m        map[string]Lease               // their Keys in no order, the store's own (index.go)
	held     map[string]map[string]int      // a key a lease in m names → those leases → its place in their Keys
	pre      map[string]map[string]struct{} // a prefix a lease in m names → those leases
	saved    map[string]savedState          // by lease key: what the files hold
	lazy     map[string]bool                // leases whose deadline or state waits for the saver
	restored map[string][]Lease
	claimed  map[string]bool
	frozen   bool // shutting down: the files stay as they are
	dirty    chan struct{}
	// pending are the leases written by Hold whose records the door may
	// not have applied yet: a snapshot takes their records from here,
	// not from the table. Saving.Wait clears them.
	pending map[string]pendingHold
	// dropLater are leases let go (Forget) whose removal the disk
	// refused: the save loop writes it once the disk takes writes.
	dropLater map[string]leaseRef
	// unsettled are the restored leases not yet compared with what the
	// cluster holds of our previous runs, with where the files say their
	// records were written from (Settle).
	unsettled map[string]written

	saveMu   sync.Mutex // one write at a time; held across reading a lease's records and writing them
	log      *wal.Log   // nil until Restore opened it
	snapSize int64      // leases.json's size when last written
	// booted: the files say that what is written next is written in
	// this boot of the host (a snapshot of this boot, or a mark).
	booted bool
}

// leaseKey is the store's name of a lease. A long id (an HTTP
// registration's is its record's key: a whole Dubbo URL) is named by its
// SHA-256 instead of a copy of it: the lease itself holds the id, and a
// second copy of every URL cost as much memory as the table's own
// (issue 34, item 2). Names are never read back into door and id.
func leaseKey(door, id string) string {
	if len(id) <= 64 {
		return door + "\x00" + id
	}
	sum := sha256.Sum256([]byte(id))
	return door + "\x01" + string(sum[:])
}

// NewStore makes the lease store of the agent whose table is table, saving
// to dataDir ("": saving nothing). Restore reads what it saved before.
func NewStore(dataDir string, table *routes.Table, logger *slog.Logger) *Store {
	return &Store{table: table, logger: logger, dir: dataDir, m: map[string]Lease{}, held: map[string]map[string]int{}, pre: map[string]map[string]struct{}{}, saved: map[string]savedState{}, lazy: map[string]bool{},
		restored: map[string][]Lease{}, claimed: map[string]bool{}, dirty: make(chan struct{}, 1),
		pending: map[string]pendingHold{}, dropLater: map[string]leaseRef{}, unsettled: map[string]written{}}
}

// PutLease records or refreshes a lease (step 1 of the package comment). A new
// lease, one covering other keys, or one whose records changed since it
// was saved is written and fsynced before PutLease returns, so that what
// the door then acknowledges survives the agent's crash (kill -9 right
// after a registration's answer restores it): the door calls it after
// applying the records. A refresh of the deadline or state alone is saved
// lazily. An error means the lease could not be saved: the door must not
// acknowledge what it covers (Hold, before applying, lets it change
// nothing then). PutLease waits for its write's fsync itself: a door that
// calls it under its own lock makes concurrent writers wait in turn
// (Hold and Drop let them share one fsync).
func (ls *Store) PutLease(l Lease) error {
	k := leaseKey(l.Door, l.ID)
	ls.mu.Lock()
	_, had := ls.m[k]
	sameCover := had && ls.sameCoverLocked(k, l)
	same := sameCover && ls.sameButDeadlineLocked(k, l)
	ls.setLocked(k, l)
	delete(ls.dropLater, k)
	delete(ls.pending, k) // the door has applied what a Hold wrote: the table says
	if ls.dir == "" || ls.frozen {
		ls.mu.Unlock()
		return nil
	}
	sv, inFile := ls.saved[k]
	ls.mu.Unlock()
	cover := !inFile || !sameCover
	if cover || ls.localSeq() > sv.seq {
		// New, other keys, or some record of ours changed since the
		// lease was written, maybe one of its own: written now unless
		// its records turn out the same.
		wrote, seq, err := ls.writeLease(k, cover)
		if err != nil {
			return err
		}
		if wrote {
			return Saving{ls: ls, seq: seq}.Wait()
		}
		ls.mu.Lock()
		sv = ls.saved[k]
		ls.mu.Unlock()
	}
	ls.refresh(k, same, l, sv)
	// The entry that wrote these records may be on its way still (a
	// Hold whose door has not waited yet).
	return Saving{ls: ls, seq: sv.wseq}.Wait()
}

// refresh saves lease l, whose records are saved as sv, lazily when its
// deadline moved past the slack, or when it was not the same lease but
// for its deadline.
func (ls *Store) refresh(k string, same bool, l Lease, sv savedState) {
	if same && l.Deadline.Sub(sv.deadline).Abs() < slackFor(l) {
		return
	}
	ls.mu.Lock()
	ls.lazy[k] = true
	ls.mu.Unlock()
	ls.kick()
}

// kick wakes the save loop.
func (ls *Store) kick() {
	select {
	case ls.dirty <- struct{}{}:
	default:
	}
}

// Leases returns the leases held now, in no order (what the HTTP door
// shows of its agent's brokers).
func (ls *Store) Leases() []Lease {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([]Lease, 0, len(ls.m))
	for k := range ls.m {
		l, _ := ls.leaseLocked(k)
		out = append(out, l)
	}
	return out
}

// slackFor is how stale l's saved deadline may get: leaseSlack, but at
// most a quarter of the time l has left, so a short TTL (an HTTP
// registration of 6 s renewed every second) comes back from a kill -9
// with most of its time, not 1 s of it, and outlives a slow restart
// until its client renews it.
func slackFor(l Lease) time.Duration {
	if l.Deadline.IsZero() {
		return leaseSlack
	}
	return min(leaseSlack, time.Until(l.Deadline)/4)
}

// writeLease appends lease k with its records as they are now. Unless
// force, it writes nothing when the records hash as they did when last
// written. It reports whether it wrote, and the entry's seq to wait for.
func (ls *Store) writeLease(k string, force bool) (wrote bool, wseq uint64, err error) {
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	return ls.writeLeaseLocked(k, force)
}

// writeLeaseLocked is writeLease with saveMu held.
func (ls *Store) writeLeaseLocked(k string, force bool) (wrote bool, wseq uint64, err error) {
	ls.mu.Lock()
	l, ok := ls.leaseLocked(k)
	sv, inFile := ls.saved[k]
	stop := !ok || ls.frozen || ls.log == nil
	ls.mu.Unlock()
	if stop {
		return true, 0, nil
	}
	// Read before the records, so what is written is at least this seq's.
	seq := ls.localSeq()
	var recs []byte
	ls.mu.Lock()
	p, held := ls.pending[k]
	ls.mu.Unlock()
	if held {
		recs = p.recs // the door may not have applied them yet: the table would say what they replace
	} else if recs, err = json.Marshal(l.Records(ls.table)); err != nil {
		return true, 0, fmt.Errorf("cannot encode the records of lease %s/%s: %w", l.Door, l.ID, err)
	}
	h := hashBytes(recs)
	if !force && inFile && h == sv.hash {
		ls.mu.Lock()
		if _, still := ls.saved[k]; still {
			ls.saved[k] = savedState{deadline: sv.deadline, seq: seq, hash: h, wseq: sv.wseq}
		}
		ls.mu.Unlock()
		return false, 0, nil
	}
	body, err := json.Marshal(leaseBody{Lease: l, Records: recs})
	if err != nil {
		return true, 0, err
	}
	wseq, err = ls.appendLeaseEntry(logEntry{Put: body})
	if err != nil {
		return true, 0, err
	}
	ls.mu.Lock()
	ls.saved[k] = savedState{deadline: l.Deadline, seq: seq, hash: h, wseq: wseq}
	delete(ls.lazy, k)
	ls.mu.Unlock()
	ls.compactIfLarge()
	return true, wseq, nil
}

// appendLeaseEntry appends e, after folding the log into a new snapshot
// when it refuses entries (a failed fsync), and returns the seq to wait
// for. The caller then records what it wrote (ls.m, ls.saved) and calls
// compactIfLarge: a snapshot taken between the two would leave out what
// the entry says, then empty the log that holds it. saveMu held.
func (ls *Store) appendLeaseEntry(e logEntry) (uint64, error) {
	if ls.log.Err() != nil {
		ls.compactLeases() // a fresh snapshot is the way back from a failed fsync
	}
	if !ls.booted && (e.Put != nil || len(e.Also) > 0 || len(e.Edits) > 0) {
		// The snapshot is of another boot (this one's could not be
		// written): without the mark, a restart would take the leases
		// after it for that boot's, whose processes are gone.
		if boot := bootID(); boot != "" {
			if _, err := ls.writeEntry(logEntry{Boot: boot}); err != nil {
				ls.logger.Error("saving registrations to the data dir failed; the change is refused", "path", ls.log.Path(), "err", err)
				return 0, fmt.Errorf("saving to the data dir failed, so the change was not made: %w", err)
			}
		}
		ls.booted = true
	}
	e.Inc, e.At = ls.table.LocalInc(), ls.localSeq()
	seq, err := ls.writeEntry(e)
	if err != nil {
		ls.logger.Error("saving registrations to the data dir failed; the change is refused", "path", ls.log.Path(), "err", err)
		return 0, fmt.Errorf("saving to the data dir failed, so the change was not made: %w", err)
	}
	return seq, nil
}

// writeEntry writes e to the log, not yet synced. saveMu held.
func (ls *Store) writeEntry(e logEntry) (uint64, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return 0, err
	}
	return ls.log.Write(b)
}

// compactIfLarge folds the log into a new snapshot when it has outgrown
// it. saveMu held.
func (ls *Store) compactIfLarge() {
	if ls.log.Size() > max(minCompact, 2*ls.snapSize) {
		ls.compactLeases()
	}
}

// compactLeases writes every lease with its records to leases.json, then
// empties the log (wal.Log.Compact). A crash between the two leaves log
// entries the snapshot already holds; their seq makes the next replay
// skip them. A
// lease Hold wrote whose records the door may not have applied yet is
// written with the records it held (pending). saveMu held.
func (ls *Store) compactLeases() error {
	ls.mu.Lock()
	keys := make([]string, 0, len(ls.m))
	leases := make([]Lease, 0, len(ls.m))
	pending := make(map[string]pendingHold, len(ls.pending))
	for k := range ls.m {
		l, _ := ls.leaseLocked(k)
		keys = append(keys, k)
		leases = append(leases, l)
	}
	for k, p := range ls.pending {
		pending[k] = p
	}
	edited := map[string]bool{}
	for k, sv := range ls.saved {
		if sv.edited {
			edited[k] = true
		}
	}
	ls.mu.Unlock()
	seq := ls.localSeq()
	inc := ls.table.LocalInc()
	ls.mu.Lock()
	unsettled := maps.Clone(ls.unsettled)
	ls.mu.Unlock()
	last := ls.log.Last() // no entry is written meanwhile: saveMu
	body := leaseFileBody{Boot: bootID(), Seq: last, Leases: make([]leaseBody, 0, len(leases))}
	saved := make(map[string]savedState, len(leases))
	for i, l := range leases {
		p, held := pending[keys[i]]
		if !held || p.edit != nil {
			var rs []routes.Record
			if held {
				rs = l.RecordsAfter(ls.table, p.edit.Puts, p.edit.Deletes) // the door may not have applied them yet
			} else {
				rs = l.Records(ls.table)
			}
			recs, err := json.Marshal(rs)
			if err != nil {
				ls.logger.Error("cannot encode a lease's records; a restart may lose them", "door", l.Door, "id", l.ID, "err", err)
				continue
			}
			p = pendingHold{recs: recs, hash: hashBytes(recs)}
		}
		lb := leaseBody{Lease: l, Records: p.recs, Inc: inc, At: seq}
		if f, ok := unsettled[keys[i]]; ok {
			lb.Inc, lb.At = f.inc, f.at // restored, its records not yet settled with the cluster's
		}
		body.Leases = append(body.Leases, lb)
		saved[keys[i]] = savedState{deadline: l.Deadline, seq: seq, hash: p.hash, edited: edited[keys[i]]}
	}
	path := filepath.Join(ls.dir, leasesFile)
	b, err := json.Marshal(body)
	if err == nil {
		b = sealed.Seal(b)
		err = ls.log.Compact(path, b, last+1) // the snapshot holds every entry
	}
	if err != nil {
		ls.logger.Error("saving registrations to the data dir failed; a restart may lose them", "path", path, "err", err)
		return err
	}
	ls.booted = true
	ls.mu.Lock()
	ls.saved = saved
	ls.lazy = map[string]bool{}
	ls.dropLater = map[string]leaseRef{} // the snapshot leaves them out
	ls.snapSize = int64(len(b))
	ls.mu.Unlock()
	return nil
}

func hashBytes(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// localSeq is our origin's seq in the table: it advances with every change
// of our own records.
func (ls *Store) localSeq() uint64 {
	e, _ := ls.table.Entry(ls.table.Local())
	return e.Seq
}

// RestoredLeases hands a door the leases restored at start (step 3 of the
// package comment). A second call returns nothing.
func (ls *Store) RestoredLeases(door string) []Lease {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.claimed[door] = true
	out := ls.restored[door]
	delete(ls.restored, door)
	return out
}

// damage is what reading the saved leases found unreadable: each file
// is judged on its own, and only what is damaged is left out.
type damage struct {
	snapshot error  // leases.json unreadable: the log is still read, whole
	logParts int    // damaged stretches of the log skipped
	entries  int    // intact entries whose lease did not decode
	aside    string // where the damaged log was copied
	// suspect: leases last written before an entry the damage destroyed,
	// not restored (see readSavedLeases).
	suspect int
}

// readSavedLeases folds leases.json and the log after it into the leases
// they hold, without changing a file (what a restart would restore).
func readSavedLeases(dir string) ([]savedLease, damage, error) {
	body, dmg, err := readLeaseSnapshot(dir)
	if err != nil {
		return nil, dmg, err
	}
	entries, ldmg, err := wal.Read(filepath.Join(dir, leaseLogFile), body.Seq, wal.Options{MaxEntry: maxLeaseEntry})
	if err != nil {
		return nil, dmg, err
	}
	leases := foldLeases(body, entries, ldmg, &dmg)
	return leases, dmg, nil
}

// readLeaseSnapshot reads leases.json: a missing one holds nothing, a
// damaged one too (dmg.snapshot says why).
func readLeaseSnapshot(dir string) (body leaseFileRead, dmg damage, err error) {
	b, err := os.ReadFile(filepath.Join(dir, leasesFile))
	switch {
	case err == nil:
		// Sealed (a checksum of the whole), so damage that leaves valid
		// JSON (a digit of seq, a byte of a record) is found too; the
		// names are the members an unsealed file of an older release
		// starts with.
		err := sealed.Check(b, "boot", "seq", "leases")
		if err == nil {
			err = json.Unmarshal(b, &body)
		}
		if err != nil {
			dmg.snapshot = fmt.Errorf("%s: %w", leasesFile, err)
			body = leaseFileRead{} // replay the whole log instead
		}
	case !os.IsNotExist(err):
		return body, dmg, err
	}
	return body, dmg, nil
}

// foldLeases folds the log's entries after leases.json (body) into the
// leases they hold, in the order they were written, and adds to dmg what
// was damaged.
//
// An entry destroyed mid-log (or intact but undecodable) may have been
// any lease's change or removal: restoring a lease last written before it
// could serve records its client replaced, or bring back one it withdrew.
// So those leases are left out (counted in dmg.suspect): they are lost,
// as the destroyed entry was, and their clients register again; leases
// written after it are restored. A lost leases.json loses the leases only
// it held, and nothing else: the log after it is the whole history since.
func foldLeases(body leaseFileRead, entries []wal.Entry, ldmg wal.Damage, dmg *damage) []savedLease {
	dmg.logParts = ldmg.Stretches
	if ldmg.Torn > 0 {
		dmg.logParts++
	}
	dmg.aside = ldmg.Aside
	lost := ldmg.Lost
	byKey := map[string]int{}
	written := make([]uint64, len(body.Leases)) // seq of each lease's last entry
	for i, sl := range body.Leases {
		byKey[leaseKey(sl.Door, sl.ID)] = i
		written[i] = body.Seq
		body.Leases[i].boot = body.Boot
	}
	leases := body.Leases
	folds := make([]folding, len(leases)) // the leases edits changed
	cur := body.Boot                      // the boot the entries read so far were written in
	index := func(k string, seq uint64) int {
		i, ok := byKey[k]
		if !ok {
			i = len(leases)
			byKey[k] = i
			leases = append(leases, savedLease{})
			folds = append(folds, folding{})
			written = append(written, 0)
		}
		written[i] = seq
		return i
	}
	gone := func(door, id string) {
		if i, ok := byKey[leaseKey(door, id)]; ok {
			leases[i], folds[i] = savedLease{}, folding{} // dropped; skipped below
		}
	}
	for _, we := range entries {
		var e logEntry
		if err := json.Unmarshal(we.Payload, &e); err != nil {
			dmg.entries++
			lost = max(lost, we.Seq)
			continue
		}
		e.Seq = we.Seq
		if e.Boot != "" {
			cur = e.Boot
			continue
		}
		if e.Drop != nil {
			gone(e.Drop.Door, e.Drop.ID)
		}
		for _, d := range e.Drops {
			gone(d.Door, d.ID)
		}
		for _, ed := range e.Edits {
			i := index(leaseKey(ed.Door, ed.ID), e.Seq)
			folds[i].apply(&leases[i], ed)
			leases[i].boot, leases[i].Inc, leases[i].At = cur, e.Inc, e.At
		}
		puts := e.Also // other leases written whole with the change (othersHolding)
		if e.Put != nil {
			puts = append([]json.RawMessage{e.Put}, e.Also...)
		}
		for _, put := range puts {
			var sl savedLease
			if err := json.Unmarshal(put, &sl); err != nil {
				dmg.entries++
				lost = max(lost, e.Seq)
				continue
			}
			sl.boot, sl.Inc, sl.At = cur, e.Inc, e.At
			i := index(leaseKey(sl.Door, sl.ID), e.Seq)
			leases[i], folds[i] = sl, folding{}
		}
	}
	for i := range leases {
		folds[i].flat(&leases[i])
	}
	out := leases[:0]
	for i, sl := range leases {
		switch {
		case sl.Door == "":
		case lost > 0 && written[i] <= lost:
			dmg.suspect++
		default:
			out = append(out, sl)
		}
	}
	return out
}

// Restore republishes, at start and before anything is served, the
// records of every saved lease that has not expired, under the new
// incarnation, then writes them as a new snapshot. When that snapshot
// cannot be written (a full disk) the files read still hold the leases,
// and the store counts them as saved, so a removal is written all the
// same. It returns the delta to publish once gossip runs.
func (ls *Store) Restore() routes.Delta {
	if ls.dir == "" {
		return routes.Delta{}
	}
	body, dmg, err := readLeaseSnapshot(ls.dir)
	if err != nil {
		ls.logger.Error("the lease snapshot cannot be read; restoring what the log holds", "dir", ls.dir, "err", err)
	}
	if dmg.snapshot != nil {
		aside, _ := atomicfile.SetAside(filepath.Join(ls.dir, leasesFile))
		ls.logger.Warn("the lease snapshot is unreadable; set it aside and restored what the log holds", "err", dmg.snapshot, "aside", aside)
	}
	logPath := filepath.Join(ls.dir, leaseLogFile)
	opts := wal.Options{MaxEntry: maxLeaseEntry, Logger: ls.logger, KeepDamaged: true}
	log, entries, ldmg, err := wal.Open(logPath, body.Seq, opts)
	if err != nil {
		ls.logger.Error("saved leases cannot be read; setting the log aside", "dir", ls.dir, "err", err)
		_, _ = atomicfile.SetAside(logPath)
		body, entries, ldmg = leaseFileRead{}, nil, wal.Damage{}
		if log, _, _, err = wal.Open(logPath, 0, opts); err != nil {
			ls.logger.Error("cannot open the lease log; registrations will not survive a restart", "dir", ls.dir, "err", err)
			return routes.Delta{}
		}
	}
	saved := foldLeases(body, entries, ldmg, &dmg)
	if dmg.logParts > 0 || dmg.entries > 0 {
		ls.logger.Warn("the lease log has damaged entries (the agent died while writing one, or the file was damaged); skipped them and restored the rest",
			"path", logPath, "damaged_stretches", dmg.logParts, "undecodable_leases", dmg.entries, "copy", dmg.aside)
	}
	if dmg.suspect > 0 {
		ls.logger.Error("the lease log lost entries to damage: the registrations last saved before them are not restored, since a lost entry may have withdrawn or changed any of them; their clients must register again",
			"path", logPath, "not_restored", dmg.suspect)
	}
	thisBoot := bootID()
	now := time.Now()
	var puts []routes.Record
	kept, expired, gone := 0, 0, 0
	ls.mu.Lock()
	for _, sl := range saved {
		switch {
		case sl.Expired(now):
			expired++
			continue
		case sl.boot != "" && sl.boot != thisBoot && !sl.Deadline.IsZero(): // the host rebooted since
			gone++
			continue
		}
		kept++
		covers := coverOf(sl.Lease)
		for _, r := range sl.Records {
			if k := r.Key(); k != "" && covers(k) {
				puts = append(puts, r)
			}
		}
		k := leaseKey(sl.Door, sl.ID)
		ls.setLocked(k, sl.Lease)
		ls.restored[sl.Door] = append(ls.restored[sl.Door], sl.Lease)
		// The files hold it, whether or not the snapshot below can be
		// written (a full disk): its removal must be written too.
		recs, _ := json.Marshal(sl.Records)
		ls.saved[k] = savedState{deadline: sl.Deadline, hash: hashBytes(recs)}
		ls.unsettled[k] = written{inc: sl.Inc, at: sl.At}
	}
	ls.mu.Unlock()
	if gone > 0 {
		ls.logger.Warn("the host restarted since the registrations were saved: the clients that held them are gone, so they are not restored",
			"leases", gone)
	}
	d, _ := ls.table.ApplyLocal(puts, nil)
	ls.saveMu.Lock()
	ls.log = log
	_ = ls.compactLeases() // logged; the log still holds what the snapshot would
	ls.saveMu.Unlock()
	ls.logger.Info("restored registrations from the data dir", "leases", kept, "expired", expired, "records", len(d.Ops))
	return d
}

// Unclaimed hands over, once, the restored leases no door took back (the
// door is off after the restart): the agent withdraws their records,
// dropping each lease first.
func (ls *Store) Unclaimed() []Lease {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var orphans []Lease
	for door, ls2 := range ls.restored {
		if !ls.claimed[door] {
			orphans = append(orphans, ls2...)
		}
	}
	ls.restored = map[string][]Lease{}
	return orphans
}

// SaveLoop writes the leases whose deadline or state changed, coalescing
// bursts, and the removals the disk refused (Forget) and the snapshot a
// refusing log needs (a failed fsync or Undo), trying those again every
// dropRetry until they are saved, until ctx is done. Only a store
// with a data dir needs it.
func (ls *Store) SaveLoop(ctx context.Context) {
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-ls.dirty:
		case <-retry:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(leaseSaveDelay):
		}
		ls.saveLazyLeases()
		retry = nil
		if !ls.saveDropsLater() || !ls.resync() {
			retry = time.After(dropRetry)
		}
	}
}

func (ls *Store) saveLazyLeases() {
	ls.mu.Lock()
	keys := make([]string, 0, len(ls.lazy))
	for k := range ls.lazy {
		keys = append(keys, k)
	}
	ls.mu.Unlock()
	for _, k := range keys {
		ls.saveMu.Lock()
		done, seq, err := ls.writeRefresh(k)
		ls.saveMu.Unlock()
		if !done {
			_, seq, err = ls.writeLease(k, true)
		}
		if err != nil {
			ls.logger.Error("saving a lease's deadline to the data dir failed; a restart may expire it early", "err", err)
		} else if seq > 0 {
			_ = ls.log.Wait(seq)
		}
	}
}

// Freeze writes a last snapshot and stops saving: what the doors do while
// the agent shuts down (closing connections) must not reach the files.
// forget empties them instead: the agent is leaving for good.
func (ls *Store) Freeze(forget bool) {
	if ls == nil || ls.dir == "" {
		return
	}
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	ls.mu.Lock()
	if forget {
		ls.m, ls.held, ls.pre = map[string]Lease{}, map[string]map[string]int{}, map[string]map[string]struct{}{}
		ls.pending = map[string]pendingHold{}
	}
	frozen := ls.frozen
	ls.frozen = true
	ls.mu.Unlock()
	if frozen || ls.log == nil {
		return
	}
	ls.compactLeases()
	if err := ls.log.Close(); err != nil {
		ls.logger.Error("closing the lease log", "err", err)
	}
}

// SavedRecords reads what a restart with data dir dir would restore: the
// records of every saved lease, by lease id (for tests outside the
// package that check what reached the disk).
func SavedRecords(dir string) (map[string][]routes.Record, error) {
	saved, _, err := readSavedLeases(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]routes.Record{}
	for _, sl := range saved {
		out[sl.ID] = sl.Records
	}
	return out, nil
}

// FailWritesForTest makes every later write of the store fail, as a
// full disk does, until heal is called (tests outside the package that
// check what a door answers then).
func (ls *Store) FailWritesForTest() (heal func()) {
	ls.saveMu.Lock()
	defer ls.saveMu.Unlock()
	return ls.log.FailWrites(errors.New("injected: no space left on device"))
}
