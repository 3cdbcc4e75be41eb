// Package routes is namecast's replicated state: every registration in the
// cluster, grouped by the agent that owns it (its origin), plus the read
// models (views) that queries answer from.
//
// It has no goroutines and no network; its clocks are logical (a Lamport
// clock for registrations, recency.go; a hybrid one for rules, hlc.go).
// The gossip layer feeds it remote changes; the agent feeds it local ones
// and reads views.
//
// # The algorithm
//
//  1. Only an origin changes its own records. Each change to one key is an
//     Op stamped with the origin's next sequence number, so within one
//     incarnation of an origin every op has a unique, growing seq.
//  2. Replicas apply ops per key, last-writer-wins by seq; deletes leave
//     tombstones so a late put cannot resurrect a key. Ops therefore commute:
//     any order, any duplication, and any subset later completed by a
//     snapshot ends in the same table. This is what lets the gossip queue
//     replace a queued op by a newer one for the same key.
//  3. An origin restarts with a higher incarnation; the first op or snapshot
//     of a new incarnation discards everything of the older one.
//  4. Each replica keeps, per origin, a digest entry (incarnation, highest
//     seq, hash). The hash is the XOR of a hash of every live (key, seq)
//     pair, kept up to date incrementally, so two replicas that hold the same
//     records have the same entry regardless of how they got there. Comparing
//     entries tells who is behind (lower seq: pull from the peer) and who
//     missed something (same seq, other hash: pull from the origin itself).
//     The origin's own snapshot is the truth at its seq: per key it
//     replaces whatever the replica holds at or below that seq when it
//     differs, even an op that looks newer (another op at a seq the origin
//     used for another key, or a tombstone), and it removes the keys it
//     does not list (their tombstones were collected). So a replica that
//     differs from its origin at the same seq, whatever the cause, holds
//     exactly the origin's records once it has merged that snapshot.
//  5. Dropping an origin (its agent died or left) removes its records and
//     sets its drop floor: every op and snapshot of an incarnation at or
//     below the one dropped is refused from then on, under the table's own
//     lock, until the gossip layer admits the origin again (alive, at a
//     given incarnation). The table does not know who is alive; the floor
//     makes the gossip layer's "apply only while alive" atomic with the
//     drop, since a member can die between its check and the apply.
//  6. Rules (the pseudo-origin RulesOrigin, owned by no agent) resolve
//     last-writer-wins by a hybrid logical clock (hlc.go): a write seen
//     before another is always ordered before it, whatever the hosts'
//     clocks say, and the wall clock only orders writes that never saw
//     each other. No decision compares two hosts' clocks in a way that
//     can lose a write that was made after seeing the other.
//  7. Several agents may hold a record of the same broker id (a broker
//     registers with every agent it is given, and moves between hosts).
//     Views serve the newest (recency.go): each table stamps its broker
//     records with a Lamport clock that witnesses every stamp it holds,
//     so a registration made after seeing another is served over it on
//     every agent; registrations that never saw each other (one must
//     lose) by their stamps, then origin name, alike everywhere. The
//     stamp comes after the broker's own stateVersion (5.x controller
//     mode). Queue data is stamped when a registration writes it (as
//     Java writes it: a first registration, or a DataVersion that
//     differs from the address's last), and the later write is served
//     after the master's precedence over a slave's (queuerec.go), never
//     the higher DataVersion counter; a copy keeps its original's stamp.
//     One agent's withdrawal removes only its own records, so another
//     agent's registration goes on being served. Claim.Wins is the same
//     order for doors' own records.
//  8. Every origin's records are bounded in number and bytes (budget.go):
//     the local origin's writes past the budget are refused before
//     anything changes (ApplyLocalWithin), and a replica refuses another
//     origin whole once its records pass it, the same on every replica,
//     until a snapshot newer than the refusal is back within it
//     (receive.go).
//
// # Indexes and watches
//
// Index grows by at least one with every change a view can see, and Wait
// blocks until it passes a given value: for readers that must see every
// change. A blocking query cares only about its own answer, so each view
// also has an index (IndexOf a Watch: a topic's route, a service's URLs in
// one category, the topic and service lists, the cluster table, the
// members, the application list, one application's instances, the
// applications mapped to an interface), the global index of the last change that could alter it, and
// WaitFor wakes only when that moved. Per-view indexes are kept in hashed
// slots (watch.go), 32 per watch key up to 2^16, so memory follows the
// table's names; one append per changed record on the write path, and a
// change wakes only the waiters of its slots. A slot shared with another
// view can move a view's index without changing its answer, so callers
// treat a wake-up as "maybe changed", as Consul's blocking queries do; at
// 100 unrelated changes a second that happens to a given watch about once
// a minute or less instead of 100 times a second. Read a view's index
// before the view, so a change
// between the two is seen by the next wait rather than missed.
//
// # Concurrency
//
// A Table is safe for concurrent use. Views return fresh values the caller
// owns.
package routes
