// Package lease describes what a protocol door (the RocketMQ port, the HTTP
// API, ZooKeeper sessions) tells its agent about one client's hold on some
// of the agent's records, so that the agent can keep those records across
// its own restart.
//
// # Restarts without a gap
//
// An agent started with a data dir saves its leases, with the records each
// one covers, whenever they change (Store; log.go says how they are
// written). Started again (systemctl restart, or a
// supervisor after kill -9), it republishes the records of every lease
// whose deadline has not passed, under its new incarnation, before it
// serves anything; peers replace the old incarnation's records with the new
// ones key by key (routes: retired records), so no route disappears or
// changes anywhere. The door that owns a lease gets it back at start
// (RestoredLeases), with its State, and from then on treats it as if the
// client had never left: the client's next registration, renewal or
// session re-attach confirms it, and its own timeout (Deadline) withdraws
// it otherwise.
//
// The files can be behind what the cluster saw of this agent (a disk
// that lost its last writes whole): before it publishes anything, a
// restarted agent asks its peers what they hold of its previous run, and
// Settle drops the restored leases older than that (settle.go).
//
// # What a door must do
//
//  1. Before it applies records for a client, Hold the lease with the
//     records it will cover: its keys (and the prefixes, each ending at a
//     path separator), the deadline past which the door would withdraw
//     them (zero: until withdrawn), and whatever State it needs to resume.
//     A new lease, other keys or prefixes, or changed records are
//     written then; an error means they could not be, and the door
//     applies nothing and answers the error. Otherwise it applies the
//     records, lets go of its own lock, and waits (Saving.Wait) until the
//     write is on disk before it answers, so that what the client was
//     told survives the agent's crash (not the host's: that ends the
//     client too). Writers waiting at once share one fsync (saving.go).
//     Refreshing only the deadline or the state is cheap (saved lazily,
//     see below): PutLease, after applying, does that, and writes and
//     waits itself when the records changed.
//  2. Before it withdraws a client's records, Drop the lease (or
//     DropLease, which also waits), then withdraw, let go of the lock,
//     and wait before acknowledging: a crash right after the withdrawal
//     cannot bring the records back at the next start, so a restart
//     never resurrects a registration that was withdrawn or had expired.
//     An error means the removal could not be written: the lease stays,
//     and the door withdraws nothing. A withdrawal nobody can refuse
//     (the client's connection closed) is Forget: withdrawn at once,
//     its removal saved once the disk takes writes.
//  3. At start, RestoredLeases(door) once, and resume each lease's client
//     from its State (its records are already republished). A lease no
//     door claims (the door is off after the restart) is withdrawn.
//
// Steps 1 and 2 are one call for a door through its host: host.Write
// with a Write (write.go) naming what the change puts and deletes, which
// saves the lease, applies the records, lets go of the door's lock and
// waits. A Write costs what it names, whatever the lease already covers
// (index.go): a ZooKeeper session's ten-thousandth znode costs what its
// first did.
//
// Deadlines are wall-clock times of this host, compared only with this
// host's clock at the next start. A deadline refresh is saved at the
// latest leaseSlack (at most a quarter of the lease's time left) after it
// happened, so a lease may come back with a
// deadline up to that much earlier than the door last set: it can only
// expire early, never live longer than its client asked.
//
// # A record more than one lease holds
//
// A record may be held by leases of several doors at once (a URL a
// ZooKeeper session created and an HTTP registration holds too). A Hold
// that changes such a record writes every other lease covering it with
// the new record, in the same log entry (othersHolding), so whichever
// lease a restart reads last, the record comes back as last
// acknowledged. Two doors changing one record at the same moment are
// ordered by their own locks, not one: what each saves is the table as
// its Wait found it.
//
// # What a lease covers
//
// A lease covers its Keys exactly, and everything under its Prefixes,
// each of which ends with the path separator '/'. Never a bare "starts
// with": a lease on znode/a/b must not cover another session's
// znode/a/bc, nor broker/b/1 broker/b/10, or a record withdrawn by its
// own client could come back with the other's lease after a crash.
package lease

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/namecast/namecast/routes"
)

// Lease is one client's hold on records of this agent.
type Lease struct {
	// Door names the door that owns the lease: "rocketmq", "http",
	// "zookeeper", "nacos".
	Door string `json:"door"`
	// ID is unique within the door: a broker's (cluster, address), a
	// registration's key, a session id, a Nacos holder (its gRPC
	// connection, or an instance kept by beats).
	ID string `json:"id"`
	// Keys are the agent's own records the lease covers, by exact key.
	// A record covered by any live lease is kept.
	Keys []string `json:"keys,omitempty"`
	// Prefixes cover every record under them (routes.QueuePrefix). Each
	// ends with '/'; an entry that does not (leases saved before Keys
	// existed listed keys here) covers only itself, like a key.
	Prefixes []string `json:"prefixes,omitempty"`
	// Deadline is when the door withdraws the records unless the client
	// confirms them; zero means never (until withdrawn).
	Deadline time.Time `json:"deadline,omitzero"`
	// Renewed is when the client last confirmed its hold (its last
	// registration or heartbeat), on this host's clock: shown to users
	// (GET /v1/brokers/leases), never decided on.
	Renewed time.Time `json:"renewed,omitzero"`
	// State is the door's own, opaque to the agent.
	State json.RawMessage `json:"state,omitempty"`
}

// Covers reports whether key is one of the lease's keys or under one of
// its prefixes.
func (l Lease) Covers(key string) bool {
	for _, k := range l.Keys {
		if key == k {
			return true
		}
	}
	for _, p := range l.Prefixes {
		if key == p || isPrefix(p) && strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// isPrefix reports whether p selects what is under it (see Prefixes).
func isPrefix(p string) bool { return strings.HasSuffix(p, "/") }

// Local is where a lease's records are looked up: the agent's own records
// (routes.Table).
type Local interface {
	LocalRecord(key string) (routes.Record, bool)
	LocalRecords(prefix string) []routes.Record
}

// Records returns the records of local the lease covers, each once, in
// key order of its keys, then of its prefixes.
func (l Lease) Records(local Local) []routes.Record {
	var out []routes.Record
	seen := map[string]bool{}
	add := func(r routes.Record) {
		if k := r.Key(); !seen[k] && l.Covers(k) {
			seen[k] = true
			out = append(out, r)
		}
	}
	for _, k := range l.Keys {
		if r, ok := local.LocalRecord(k); ok {
			add(r)
		}
	}
	for _, p := range l.Prefixes {
		if !isPrefix(p) {
			if r, ok := local.LocalRecord(p); ok {
				add(r)
			}
			continue
		}
		for _, r := range local.LocalRecords(p) {
			add(r)
		}
	}
	return out
}

// SameCover reports whether l and o cover the same keys and prefixes.
func (l Lease) SameCover(o Lease) bool {
	return slices.Equal(l.Keys, o.Keys) && slices.Equal(l.Prefixes, o.Prefixes)
}

// SameButDeadline reports whether l and o are the same lease, covering the
// same keys and prefixes with the same state: only their deadlines may
// differ.
func (l Lease) SameButDeadline(o Lease) bool {
	return l.Door == o.Door && l.ID == o.ID && l.SameCover(o) && string(l.State) == string(o.State)
}

// Expired reports whether the deadline has passed at now.
func (l Lease) Expired(now time.Time) bool {
	return !l.Deadline.IsZero() && !now.Before(l.Deadline)
}

// Holder is what an agent offers its doors (through package host; Store
// implements it).
type Holder interface {
	// Hold writes a lease with the records it will cover before the door
	// applies them (step 1 above); an error means it could not be
	// written, and the door applies nothing. The door waits for the
	// Saving, after applying and outside its own lock, before it answers.
	Hold(l Lease, recs []routes.Record) (Saving, error)
	// PutLease records or refreshes a lease after the door applied what
	// it covers, durably (waiting itself) when the lease or its records
	// are new; an error means it could not be saved, and the door must
	// not acknowledge what it covers.
	PutLease(l Lease) error
	// Drop writes a lease's removal before its records are withdrawn
	// (step 2 above); an error means it could not be written, the lease
	// stays, and the door withdraws nothing. The door waits for the
	// Saving before it acknowledges.
	Drop(door, id string) (Saving, error)
	// DropLease is Drop, then Saving.Wait.
	DropLease(door, id string) error
	// Forget is Drop for a withdrawal nobody can refuse (the client let
	// go): the lease goes now, its removal is saved when the disk allows.
	Forget(door, id string) Saving
	// RestoredLeases hands a door the leases restored at start (step 3).
	RestoredLeases(door string) []Lease
	// HoldAll is Hold and Drop of several leases as one change, written
	// whole or not at all.
	HoldAll(cs []Change) (Saving, error)
	// Undo puts back what a HoldAll changed when the rest of the door's
	// change failed; it cannot be refused (see Store.Undo), and an error
	// says the files hold the refused change until the next snapshot.
	Undo(cs []Change) (Saving, error)
}

// RecordsAfter is what Records will return once puts and deletes are
// applied to local: the records a door hands Hold before applying them.
// A broker or queue put without a stamp keeps the stamp of the record it
// replaces, as the table keeps it when nothing else changed (routes'
// recency.go),
// so a re-registration that changes nothing is seen as the same records
// and writes nothing.
func (l Lease) RecordsAfter(local Local, puts []routes.Record, deletes []string) []routes.Record {
	return l.Records(overlay{local: local, puts: puts, deletes: deletes})
}

// overlay is local with puts and deletes applied.
type overlay struct {
	local   Local
	puts    []routes.Record
	deletes []string
}

func (o overlay) LocalRecord(key string) (routes.Record, bool) {
	for i := len(o.puts) - 1; i >= 0; i-- {
		if o.puts[i].Key() == key {
			return o.stamped(o.puts[i]), true
		}
	}
	if slices.Contains(o.deletes, key) {
		return routes.Record{}, false
	}
	return o.local.LocalRecord(key)
}

func (o overlay) LocalRecords(prefix string) []routes.Record {
	byKey := map[string]routes.Record{}
	for _, r := range o.local.LocalRecords(prefix) {
		byKey[r.Key()] = r
	}
	for _, k := range o.deletes {
		delete(byKey, k)
	}
	for _, r := range o.puts {
		if k := r.Key(); strings.HasPrefix(k, prefix) {
			byKey[k] = o.stamped(r)
		}
	}
	keys := slices.Sorted(maps.Keys(byKey))
	out := make([]routes.Record, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// stamped is put r as the table will hold it when only its stamp is
// missing (see RecordsAfter): a broker keeps the stamp of the record it
// replaces, and so does queue data that is no copy and replaces the same
// data (a door that writes a lease first stamps queue data itself with
// routes.Table.StampQueues, which also knows when the table would
// stamp it anew).
func (o overlay) stamped(r routes.Record) routes.Record {
	switch {
	case r.Broker != nil && r.Broker.Stamp == 0:
		old, ok := o.local.LocalRecord(r.Key())
		if !ok || old.Broker == nil || old.Broker.Stamp == 0 {
			return r
		}
		b := *r.Broker
		b.Stamp = old.Broker.Stamp
		return routes.Record{Broker: &b}
	case r.Queue != nil && r.Queue.Stamp == 0 && !r.Queue.Copy:
		old, ok := o.local.LocalRecord(r.Key())
		if !ok || old.Queue == nil || old.Queue.Stamp == 0 || old.Queue.Copy {
			return r
		}
		q := *r.Queue
		q.Stamp = old.Queue.Stamp
		if q != *old.Queue {
			return r
		}
		return routes.Record{Queue: &q}
	}
	return r
}
