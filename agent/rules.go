package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/namecast/namecast/internal/atomicfile"
	"github.com/namecast/namecast/internal/sealed"
	"github.com/namecast/namecast/internal/wal"
	"github.com/namecast/namecast/routes"
)

// Cluster-scoped rules (Dubbo's persistent URLs, persistent znodes, KV
// config) in the data dir: rules.json is a snapshot (sealed with a
// checksum, package sealed) of every rule this
// agent holds (its own writes and its peers'), rules.log (package wal)
// the deltas this agent's doors wrote since that snapshot. A write
// through a door is prepared (stamped, in the order writes reach the
// agent), appended to the log and fsynced (writers share fsyncs), and
// only then applied and
// gossiped, so the answer never
// precedes the disk, and a write that cannot be saved changes nothing
// anywhere. Rules learnt from peers reach rules.json with the next
// snapshot (at most a second later): a peer that acknowledged them holds
// them on its own disk. Each snapshot also cuts the log down to the
// entries it does not cover.
//
// Replaying is order-free: rules resolve last-writer-wins by their
// stamps, so the snapshot, then every valid line of the log, rebuild what
// was acknowledged; a damaged line is skipped without losing the ones
// after it.
const (
	rulesFile    = "rules.json"
	rulesLogFile = "rules.log"
)

// DefaultRulesLimit bounds the rules an agent's doors accept in all (see
// Config.RulesLimit).
const DefaultRulesLimit = 32 << 20

// DefaultMaxRecords and DefaultMaxRecordsMiB bound the records an agent's
// doors hold for their clients (Config.MaxRecords): far above what a
// host of hundreds of processes registers (300 Dubbo processes of 200
// interfaces each, providers and consumers: 120,000 URLs of ~1 KB; a
// broker of 50,000 topics: 50,000 queue records of ~110 bytes).
const (
	DefaultMaxRecords    = 250_000
	DefaultMaxRecordsMiB = 256
)

// budget is the bound on one origin's records in force.
func (c *Config) budget() routes.Budget {
	return routes.Budget{Records: c.MaxRecords, Bytes: int64(c.MaxRecordsMiB) << 20}
}

// rulesStore is the agent's side of rule writes: their bound, and with a
// data dir their log. The doors write through it (host.Config.Rules).
type rulesStore struct {
	table   *routes.Table
	dir     string // the data dir; "": none
	limit   int    // Config.RulesLimit
	ready   *readiness
	publish func(routes.Delta) // gossips a change; set once gossip runs
	logger  *slog.Logger

	// order makes writes reach mu in the order they reached the agent,
	// waiting for its first sync included (see apply); guards syncBy,
	// when writes stop waiting for that sync.
	order   sync.Mutex
	syncBy  time.Time
	mu      sync.Mutex // orders prepare+append; guards pending and inflight
	pending int        // bytes of writes appended, not yet applied
	log     *wal.Log   // nil without a data dir
	// inflight are the log's entries written and not yet applied: a
	// snapshot taken meanwhile may not hold them, so its compaction
	// keeps them.
	inflight map[uint64]bool
}

// load merges the rules saved by the previous run: the snapshot,
// then the log (package wal; one written by an earlier release is
// rewritten in this one's format). A damaged snapshot is set aside (a
// copy kept under a new name) and the log still read; damaged log
// entries are skipped and the log copied aside. Then it writes a fresh
// snapshot and an empty log, and keeps the log open for this run's
// writes.
func (s *rulesStore) load() error {
	if s.dir == "" {
		return nil
	}
	if err := s.readSnapshot(true); err != nil {
		return err
	}
	logPath := filepath.Join(s.dir, rulesLogFile)
	log, entries, dmg, err := wal.Open(logPath, 0, wal.Options{Logger: s.logger, KeepDamaged: true})
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	s.log, s.inflight = log, map[uint64]bool{}
	s.replay(entries, dmg, logPath)
	if err := s.snapshot(); err != nil {
		s.logger.Error("writing the rules snapshot failed; the log keeps them", "err", err)
	}
	return nil
}

// read merges the saved rules into the table without changing a file
// (SavedRules: what a restart would restore).
func (s *rulesStore) read() error {
	if err := s.readSnapshot(false); err != nil {
		return err
	}
	logPath := filepath.Join(s.dir, rulesLogFile)
	entries, dmg, err := wal.Read(logPath, 0, wal.Options{})
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	s.replay(entries, dmg, logPath)
	return nil
}

// readSnapshot merges rules.json into the table; with setAside it sets a
// damaged one aside.
func (s *rulesStore) readSnapshot(setAside bool) error {
	path := filepath.Join(s.dir, rulesFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	var snap routes.Snapshot
	// Sealed with a checksum, so damage that leaves valid JSON (a byte
	// of a value, a digit of a stamp) is found too; "o" is the member an
	// unsealed file of an older release starts with.
	if err = sealed.Check(b, "o"); err == nil {
		err = json.Unmarshal(b, &snap)
	}
	if err == nil && snap.Origin != routes.RulesOrigin {
		err = fmt.Errorf("origin %q, not %q", snap.Origin, routes.RulesOrigin)
	}
	if err != nil {
		aside := ""
		if setAside {
			aside, _ = atomicfile.SetAside(path)
		}
		s.logger.Warn("saved rules snapshot is unreadable; set it aside, reading the log still", "path", path, "aside", aside, "err", err)
		return nil
	}
	snap.Authoritative = false
	res := s.table.Merge(snap)
	s.logger.Info("loaded saved rules", "rules", res.Applied)
	return nil
}

// replay applies the log's entries (rules resolve by their stamps, so in
// any order), skipping what is damaged.
func (s *rulesStore) replay(entries []wal.Entry, dmg wal.Damage, logPath string) {
	damaged := dmg.Stretches
	if dmg.Torn > 0 {
		damaged++
	}
	applied := 0
	for _, e := range entries {
		var d routes.Delta
		if json.Unmarshal(e.Payload, &d) != nil || d.Origin != routes.RulesOrigin {
			damaged++
			continue
		}
		applied += s.table.Apply(d).Applied
	}
	if damaged > 0 {
		s.logger.Warn("rules log has damaged entries; skipped them, kept the rest", "path", logPath, "damaged", damaged, "aside", dmg.Aside)
	}
	if len(entries) > 0 {
		s.logger.Info("replayed the rules log", "entries", len(entries), "applied", applied)
	}
}

// apply writes cluster-scoped rules and gossips the change, once it
// is within the bound and, with a data dir, on disk. ok false: nothing
// to change.
func (s *rulesStore) apply(puts []routes.Record, deletes []string) (bool, error) {
	// Writes are stamped in the order they reach the agent: one waiting
	// for the first sync holds the later ones back. A write whose client
	// gave up waiting (RocketMQ clients wait 5 s, ruleSyncWait long) and
	// wrote again on another connection must never be stamped after that
	// later write, or it would undo it (last writer wins by stamp). They
	// all wait until the same moment, not ruleSyncWait each in turn.
	s.order.Lock()
	if !s.ready.Ready() {
		if s.syncBy.IsZero() {
			s.syncBy = time.Now().Add(ruleSyncWait)
		}
		if wait := time.Until(s.syncBy); wait > 0 {
			s.ready.await(wait, s.logger)
		}
	}
	s.mu.Lock()
	s.order.Unlock()
	d, ok := s.table.PrepareRules(puts, deletes)
	if !ok {
		s.mu.Unlock()
		return false, nil
	}
	total, replaced := s.table.RulesSize(d)
	added := 0
	for _, op := range d.Ops {
		if op.Rec != nil {
			added += routes.RuleSize(op.Key, *op.Rec)
		}
	}
	limit := s.limit
	if limit <= 0 {
		limit = DefaultRulesLimit
	}
	if grown := total + s.pending - replaced + added; added > replaced && grown > limit {
		s.mu.Unlock()
		return false, fmt.Errorf("%w: this write would take the cluster's rules (persistent URLs, persistent znodes, KV config) to %d bytes, over the %d-byte limit; delete rules no longer used, or raise rules_limit on every agent", routes.ErrRulesFull, grown, limit)
	}
	if s.log == nil {
		s.mu.Unlock()
		s.table.Apply(d)
		s.publish(d)
		return true, nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		s.mu.Unlock()
		return false, err
	}
	seq, err := s.log.Write(b)
	if err != nil {
		s.mu.Unlock()
		return false, fmt.Errorf("saving the rule to the data dir failed, so it was not made: %w", err)
	}
	s.pending += added
	s.inflight[seq] = true
	s.mu.Unlock()
	err = s.log.Wait(seq)
	if err == nil {
		s.table.Apply(d)
	}
	s.mu.Lock()
	s.pending -= added
	delete(s.inflight, seq)
	s.mu.Unlock()
	if err != nil {
		return false, fmt.Errorf("saving the rule to the data dir failed, so it was not made: %w", err)
	}
	s.publish(d)
	return true, nil
}

// loop snapshots the rules whenever they change (at most once a
// second) and collects old rule tombstones now and then.
func (s *rulesStore) loop(ctx context.Context) {
	var saved routes.DigestEntry
	lastGC := time.Now()
	for {
		idx := s.table.Index()
		broken := s.log != nil && s.log.Err() != nil
		if s.log != nil {
			// A broken log refuses every rule write until a snapshot
			// rewrites it; with no change to prompt one (an agent alone)
			// it is retried each second, until the disk takes it.
			if e := s.table.Digest()[routes.RulesOrigin]; e != saved || broken {
				if err := s.snapshot(); err != nil {
					s.logger.Error("saving rules to the data dir failed", "err", err)
				} else {
					saved = e
				}
			}
		}
		if time.Since(lastGC) > 10*time.Minute {
			if n := s.table.CollectRuleTombstones(); n > 0 {
				s.logger.Info("collected rule tombstones", "count", n)
			}
			s.table.ForgetGone()
			lastGC = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		if broken {
			continue
		}
		// A write that breaks the log changes nothing in the table, so
		// the wait for a change is bounded.
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		s.table.Wait(wctx, idx)
		cancel()
	}
}

// snapshot writes rules.json from the table, then cuts the log to
// the entries the snapshot may not hold: those from the oldest one not
// yet applied when the snapshot was taken.
func (s *rulesStore) snapshot() error {
	s.mu.Lock()
	from := s.log.Last() + 1
	for seq := range s.inflight {
		from = min(from, seq)
	}
	s.mu.Unlock()
	snap, _ := s.table.Snapshot(routes.RulesOrigin)
	b, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	return s.log.Compact(filepath.Join(s.dir, rulesFile), sealed.Seal(b), from)
}

// close closes the rules log at shutdown, once no door writes.
func (s *rulesStore) close() {
	if s.log != nil {
		_ = s.log.Close()
	}
}
