// Package lease describes what a protocol door (the RocketMQ port, the HTTP
// API, ZooKeeper sessions) tells its agent about one client's hold on some
// of the agent's records, so that the agent can keep those records across
// its own restart.
//
// # Restarts without a gap
//
// An agent started with a data dir saves its leases, with the records each
// one covers, whenever they change. Started again (systemctl restart, or a
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
// # What a door must do
//
//  1. After it applies records for a client, PutLease with the key prefixes
//     that cover them, the deadline past which the door would withdraw
//     them (zero: until withdrawn), and whatever State it needs to resume.
//     Refreshing only the deadline is cheap (saved lazily, see below).
//  2. Before it withdraws a client's records, DropLease. The agent then
//     makes the removal durable before returning, so that a crash right
//     after the withdrawal cannot bring the records back at the next start:
//     a restart never resurrects a registration that was withdrawn or had
//     expired.
//  3. At start, RestoredLeases(door) once, and resume each lease's client
//     from its State (its records are already republished). A lease no
//     door claims (the door is off after the restart) is withdrawn.
//
// Deadlines are wall-clock times of this host, compared only with this
// host's clock at the next start. A deadline refresh is saved at the
// latest leaseSlack after it happened, so a lease may come back with a
// deadline up to that much earlier than the door last set: it can only
// expire early, never live longer than its client asked.
package lease

import (
	"encoding/json"
	"strings"
	"time"
)

// Lease is one client's hold on records of this agent.
type Lease struct {
	// Door names the door that owns the lease: "rocketmq", "http",
	// "zookeeper".
	Door string `json:"door"`
	// ID is unique within the door: a broker's (cluster, address), a
	// registration's key, a session id.
	ID string `json:"id"`
	// Prefixes select the agent's own records the lease covers (a record
	// key is its own prefix). A record covered by any live lease is kept.
	Prefixes []string `json:"prefixes"`
	// Deadline is when the door withdraws the records unless the client
	// confirms them; zero means never (until withdrawn).
	Deadline time.Time `json:"deadline,omitzero"`
	// State is the door's own, opaque to the agent.
	State json.RawMessage `json:"state,omitempty"`
}

// Covers reports whether key is under one of the lease's prefixes.
func (l Lease) Covers(key string) bool {
	for _, p := range l.Prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// Expired reports whether the deadline has passed at now.
func (l Lease) Expired(now time.Time) bool {
	return !l.Deadline.IsZero() && !now.Before(l.Deadline)
}

// Holder is what an agent offers its doors (agent.Agent implements it).
type Holder interface {
	// PutLease records or refreshes a lease (step 1 above).
	PutLease(l Lease)
	// DropLease forgets a lease before its records are withdrawn, durably
	// (step 2 above).
	DropLease(door, id string)
	// RestoredLeases hands a door the leases restored at start (step 3).
	RestoredLeases(door string) []Lease
}
