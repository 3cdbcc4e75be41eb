package lease

import (
	"encoding/json"
	"os"
	"strings"
)

// The leases are kept in two files: leases.json, every lease with its
// records as of some moment, and leases.log (package wal), the changes
// since, appended one lease at a time. Rewriting the whole file for each
// registration made a registration's answer cost a write of every other
// one (52 ms with 5,000 held); appending costs what that one lease holds.
// When the log outgrows the snapshot it is folded into a new leases.json
// (wal.Log.Compact).
//
// Both are fsynced before a door answers: an entry is written under the
// store's save lock, then synced outside it, and writers that wait at
// once share one fsync (group commit). A failed fsync leaves the log
// refusing entries until the next snapshot rewrites everything.
//
// A host that crashes or reboots takes the clients on it down too, and a
// lease restored after that would serve routes of processes that no
// longer exist, so Restore drops every lease with a deadline written
// during another boot (see bootID): the snapshot says its boot, and a
// run whose own snapshot could not be written marks the log with its
// boot before its first lease (logEntry.Boot).
//
// Reading judges each entry on its own (package wal): a damaged entry is
// skipped, and the entries after it still count. What the damaged entry
// said is lost, and it may have been any lease's change or removal, so
// the leases last written before it are not restored (readSavedLeases):
// a registration lost to damage is registered again by its client, where
// one brought back would serve what its client withdrew or replaced.

const leaseLogFile = "leases.log"

// maxLeaseEntry bounds one log entry: a broker with many topics is the
// largest lease (~200 bytes a topic).
const maxLeaseEntry = 64 << 20

// logEntry is one change of the lease table: a lease with its records as
// they are now, or a lease gone. Its number (the log's, package wal)
// orders entries across compactions: a snapshot holds every entry up to
// its Seq.
type logEntry struct {
	// Seq is the entry's number: the log's (in a log of release 0.1.0,
	// also written here).
	Seq uint64          `json:"seq,omitempty"`
	Put json.RawMessage `json:"put,omitempty"` // a leaseBody
	// Also are other leases written with Put, as one change: those that
	// cover a record Put changes (Hold), so that every lease holding a
	// record comes back with it as last acknowledged.
	Also []json.RawMessage `json:"also,omitempty"`
	Drop *leaseRef         `json:"drop,omitempty"`
	// Drops are leases gone with the puts (HoldAll), as one change.
	Drops []leaseRef `json:"drops,omitempty"`
	// Edits are changes of leases naming only what changes (edit.go),
	// made with the rest of the entry as one change.
	Edits []leaseEdit `json:"edits,omitempty"`
	// Boot, in an entry of nothing else, marks the entries after it as
	// written during that boot of the host, up to the next mark (before
	// the first: the snapshot's boot). A run writes one before its first
	// lease when the snapshot is of another boot (its own could not be
	// written: a full disk).
	Boot string `json:"boot,omitempty"`
	// Inc and At are our origin's incarnation and seq as the entry was
	// written (settle.go): every change of our records at or below At
	// was applied before it.
	Inc uint64 `json:"inc,omitempty"`
	At  uint64 `json:"at,omitempty"`
}

type leaseRef struct {
	Door string `json:"door"`
	ID   string `json:"id"`
}

// leaseBody is a lease with its records, as written; records are encoded
// once, also to tell whether they changed (Store.saved).
type leaseBody struct {
	Lease
	Records json.RawMessage `json:"records"`
	// Inc and At say, in leases.json, where the records were written
	// from, as logEntry's do for an entry's leases.
	Inc uint64 `json:"inc,omitempty"`
	At  uint64 `json:"at,omitempty"`
}

// bootID names this boot of the host ("" where the kernel does not say):
// leases saved under another boot belong to processes that are gone.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
