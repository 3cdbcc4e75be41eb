// Package wal is the agent's durable log: the one way a store in the data
// dir (the rules store's rules.log, the lease store's leases.log) saves a
// change before the change is acknowledged, and folds its changes into a
// snapshot now and then. It owns the format of a log file, group commit,
// what a failed write or fsync does, compaction, and what reading a
// damaged file restores; a store owns what an entry says and what its
// snapshot holds.
//
// # Format
//
// A log is a sequence of frames: the length of the body (4 bytes,
// big-endian), its CRC-32C (Castagnoli, 4 bytes, big-endian), then the
// body: the entry's sequence number (8 bytes, big-endian) and its payload.
// Entries are numbered from 1 without gaps while the log accepts them. A
// frame without payload is a mark: the entries after it start after its
// sequence number, and nothing before it is missing from this file by
// damage (a compaction writes one first, so a log holding no entry still
// says where numbering goes on). Files written by releases up to 0.1.0
// (the rules log's lines "crc32c-hex payload", the lease log's frames of a
// JSON body) are read (legacy.go) and rewritten once in this format when
// opened.
//
// # Writing: group commit
//
// Write appends an entry without waiting for the disk and returns its
// sequence number; Wait returns once that entry is on disk. Writers that
// wait at once share one fsync: one of them runs it, covering every entry
// written so far, and the others wait for it or run the next. A writer is
// answered only once its own entry is covered (or a snapshot that holds it
// was written, see Compact); the caller acknowledges nothing before.
//
// # Failures
//
// A failed write is cut off again (the file truncated to where the entry
// began), so no later entry lands behind half of one, and the entry is
// refused; if even the cut fails, the log refuses every later entry. A
// failed fsync poisons the log: after one the kernel may have dropped the
// dirty pages, and a later fsync would report success for data it lost. So
// every entry the failed fsync did not cover is refused to its writer, cut
// off the file (a restart must not replay a change answered "not made"),
// and the log refuses every later Write, loudly, until Compact rewrites
// it. Poison lets a store do the same when the log no longer says what it
// holds.
//
// # Compaction
//
// Compact writes the store's snapshot (whole, through a rename, package
// atomicfile), then rewrites the log (through a rename too) with only the
// entries from a sequence number on: those the snapshot may not hold. A
// crash between the two leaves the old log beside the new snapshot; the
// store skips the entries its snapshot holds (by their numbers, or because
// replaying them again changes nothing). Compact also clears a poisoned
// log, and answers every waiting writer whose entry the snapshot holds.
//
// # Reading damage
//
// Each frame is judged on its own. A damaged stretch (a bad length,
// checksum or form) is skipped by looking for the next intact frame from
// the following byte on, so damage mid-log does not cut off what follows.
// Intact entries numbered past the one before them tell what the damage
// destroyed (Damage.Lost): the store decides what that costs (the lease
// store leaves out the leases last written before it). Damage after the
// last intact frame is a torn tail, an entry the process died writing,
// never acknowledged: Open cuts it off and logs it. A last entry lost
// whole (a disk that loses its last write) leaves nothing to see: the
// log reads as if it had never been written.
//
// # Concurrency
//
// A Log is safe for concurrent use. Write calls are ordered by the log's
// lock (a store that needs its own order holds its own lock around
// Write); an fsync runs outside it, so writers append while one is under
// way.
package wal
