package main

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// crashCluster is the crash test's small cluster: agents with --data-dir,
// each on a tmpfs of its own where mount namespaces may be made (so its
// disk can fill), and the faults done to them: kill -9, a full disk,
// damaged files.
type crashCluster struct {
	t     *testing.T
	procs []*proc
	rng   *rand.Rand
	// files is where the test sees agent i's data dir (through the
	// namespace holding the tmpfs, when there is one).
	files []string
	disks bool // each data dir is a small tmpfs: fill can fill it
	// reserve is what a restart on a full disk is given (fillDisk)
	reserve int

	mu sync.Mutex
	// damaged: agent -> file class ("leases" or "rules") damaged since
	// the last check; the keys of that class homed there may be lost.
	damaged map[int]map[string]bool

	crashes, fullEpisodes int
	// restarts tried on a full disk, and how many of them the agent
	// refused (it cannot write its data dir)
	restartsFull, refusedFull int
	damages                   map[string]int
	// keys are every writer's keys.
	keys []*ckey
}

// crashDiskSize is each agent's tmpfs: room for its logs between
// compactions (a lease log is folded at 1 MiB) and their snapshots.
const crashDiskSize = 8 << 20

func startCrashCluster(t *testing.T, n int, seed uint64) *crashCluster {
	c := &crashCluster{t: t, reserve: 8 << 10, rng: rand.New(rand.NewPCG(seed, 24)), damaged: map[int]map[string]bool{}, damages: map[string]int{}}
	base := t.TempDir()
	var dirs []string
	for i := range n {
		d := filepath.Join(base, "n"+strconv.Itoa(i))
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	holder, err := smallDisks(t, crashDiskSize, dirs...)
	switch {
	case err == nil:
		c.disks = true
	case os.Getenv("NAMECAST_NETNS") == "require":
		t.Fatal(err)
	default:
		t.Logf("no disk-full episodes: %v (set NAMECAST_NETNS=require to fail instead)", err)
	}
	label := "crash-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	for i, d := range dirs {
		p := &proc{t: t, name: fmt.Sprintf("n%d", i), dataDir: d, label: label,
			gossip: freeAddr(t), http: freeAddr(t), rmq: freeAddr(t), zk: freeAddr(t), log: newSyncBuffer()}
		files := d
		if c.disks {
			p.wrap = []string{"nsenter", "-t", strconv.Itoa(holder), "-m", "--"}
			files = "/proc/" + strconv.Itoa(holder) + "/root" + d
		}
		if i > 0 {
			p.join = c.procs[0].gossip
		}
		c.procs = append(c.procs, p)
		c.files = append(c.files, files)
		t.Cleanup(func() {
			if p.cmd != nil {
				p.stop(syscall.SIGKILL)
			}
			if t.Failed() {
				t.Logf("log of %s:\n%s", p.name, p.log.String())
			}
		})
		c.firstStart(p)
	}
	if n > 1 {
		c.procs[0].join = c.procs[1].gossip // so its restarts find the cluster too
	}
	return c
}

// firstStart starts p and waits until it serves. A port of its taken
// meanwhile by something else on this shared machine (freeAddr let go of
// it before the agent bound it; a run failed so: bind: address already
// in use) is no fault of the agent, and nothing knows its ports yet: it
// starts again on fresh ones.
func (c *crashCluster) firstStart(p *proc) {
again:
	for tries := 0; ; tries++ {
		p.start()
		deadline := time.Now().Add(30 * time.Second)
		for p.healthy() != nil {
			select {
			case <-p.exited:
				if tries < 5 && strings.Contains(lastLine(p), "address already in use") {
					p.gossip, p.http, p.rmq, p.zk = freeAddr(c.t), freeAddr(c.t), freeAddr(c.t), freeAddr(c.t)
					continue again
				}
				c.t.Fatalf("%s exited at start:\n%s", p.name, p.log.String())
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("%s not healthy 30 s after its start: %v", p.name, p.healthy())
			}
		}
		return
	}
}

// lastLine is the last line agent p wrote: why it exited, when it did.
func lastLine(p *proc) string {
	out := strings.TrimSpace(p.log.String())
	return out[strings.LastIndexByte(out, '\n')+1:]
}

// kill -9s agent i. With NAMECAST_CRASH_EVIDENCE set, its data dir as
// the kill left it is copied there (DIR/killNN-nI: before the damage the
// kill may be followed by), for a failure's post-mortem.
func (c *crashCluster) kill(i int) {
	c.procs[i].stop(syscall.SIGKILL)
	c.crashes++
	if dir := os.Getenv("NAMECAST_CRASH_EVIDENCE"); dir != "" {
		dst := filepath.Join(dir, fmt.Sprintf("kill%02d-n%d", c.crashes, i))
		os.MkdirAll(dst, 0o700)
		entries, _ := os.ReadDir(c.files[i])
		for _, e := range entries {
			if b, err := os.ReadFile(filepath.Join(c.files[i], e.Name())); err == nil && e.Name() != "filler" {
				os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600)
			}
		}
	}
}

// restart starts agent i again and waits until it serves. With its disk
// still full it may refuse to start (it cannot write its data dir): then
// the disk is freed (free) and it is started again.
func (c *crashCluster) restart(i int, free func()) {
	p := c.procs[i]
	if free != nil {
		c.restartsFull++
	}
	p.start()
	deadline := time.Now().Add(30 * time.Second)
	for binds := 0; p.healthy() != nil; {
		select {
		case <-p.exited:
			if strings.Contains(lastLine(p), "address already in use") && binds < 20 {
				// Its port was taken meanwhile by something else on this
				// shared machine (an outgoing connection's ephemeral
				// port): try again, as a supervisor would.
				binds++
				time.Sleep(250 * time.Millisecond)
				p.start()
				continue
			}
			if free == nil {
				c.t.Fatalf("%s exited on restart:\n%s", p.name, p.log.String())
			}
			c.t.Logf("%s would not start on a full disk (%s); freed it", p.name, lastLine(p))
			c.refusedFull++
			free()
			free = nil
			p.start()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s not healthy 30 s after its restart: %v", p.name, p.healthy())
		}
	}
	if free != nil {
		free()
	}
}

// fillDisk fills agent i's tmpfs; the func returned frees it. A reserve
// of two pages is taken first: freeing it alone (spare) gives a restart
// on the full disk room for its incarnation file, not for its snapshots.
func (c *crashCluster) fillDisk(i int) (free, spare func()) {
	c.fullEpisodes++
	reserve := filepath.Join(c.files[i], "reserve")
	if err := os.WriteFile(reserve, make([]byte, c.reserve), 0o600); err != nil {
		c.t.Fatal(err)
	}
	spare = func() { os.Remove(reserve) }
	rm := fill(c.t, filepath.Join(c.files[i], "filler"))
	return func() { spare(); rm() }, spare
}

// mayLose: the key of this kind homed at agent home may have been
// destroyed by damage done since the last check.
func (c *crashCluster) mayLose(kind string, home int) bool {
	class := "rules"
	if leaseKind(kind) {
		class = "leases"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.damaged[home][class]
}

func (c *crashCluster) checked() {
	c.mu.Lock()
	c.damaged = map[int]map[string]bool{}
	c.mu.Unlock()
}

// damage harms one of stopped agent i's files, as a torn write or a
// failing disk would, and records what it may have destroyed:
//
//   - torn tail: a partial entry after a log's last one, as a crash in
//     the middle of an append leaves. It destroys nothing acknowledged
//     (an entry is fsynced before its answer), so everything is owed.
//   - garbled entry: bytes overwritten inside one of a log's entries
//     other than its last (the last would be a torn tail). What that
//     entry said is gone: its agent may lose keys of that file's class
//     homed there, but nothing deleted may come back and no overwritten
//     value may be served again.
//   - damaged snapshot: leases.json or rules.json cut short or garbled:
//     likewise.
//   - lost entries: the last one to three entries of leases.log gone
//     whole, the file cut where one begins, as a disk that loses its
//     last writes leaves it: nothing on disk says anything is missing.
//     Acknowledged changes in them may be lost, but nothing the cluster
//     saw withdrawn or overwritten may come back: the restarted agent
//     asks its peers first (agent/lease: settle.go). Only in a cluster:
//     an agent alone cannot know.
//
// Rules are also held by every peer, so a lost rule comes back from them
// (the report counts what was lost to damage). An agent alone has no
// such second copy, and a destroyed rules.log entry that deleted a rule
// would bring it back: that damage is done only in a cluster (the rules
// store replays its log order-free and does not ask which rules a
// destroyed entry could have changed).
func (c *crashCluster) damage(i int) {
	type harm struct {
		file, how string
	}
	var options []harm
	for _, f := range []string{"leases.log", "rules.log"} {
		if st, err := os.Stat(filepath.Join(c.files[i], f)); err == nil {
			options = append(options, harm{f, "torn tail"})
			if st.Size() > 0 && (f == "leases.log" || len(c.procs) > 1) {
				options = append(options, harm{f, "garbled entry"})
			}
			if st.Size() > 0 && f == "leases.log" && len(c.procs) > 1 {
				options = append(options, harm{f, "lost entries"})
			}
		}
	}
	for _, f := range []string{"leases.json", "rules.json"} {
		if _, err := os.Stat(filepath.Join(c.files[i], f)); err == nil {
			options = append(options, harm{f, "damaged snapshot"})
		}
	}
	if len(options) == 0 {
		return
	}
	h := options[c.rng.IntN(len(options))]
	path := filepath.Join(c.files[i], h.file)
	b, err := os.ReadFile(path)
	if err != nil {
		c.t.Fatal(err)
	}
	// Written in place, so that a full disk can be damaged too.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	garble := func(lo, hi int) {
		for range 1 + c.rng.IntN(8) {
			off := lo + c.rng.IntN(hi-lo)
			if _, err := f.WriteAt([]byte{b[off] ^ byte(1+c.rng.IntN(255))}, int64(off)); err != nil {
				c.t.Fatal(err)
			}
		}
	}
	switch h.how {
	case "torn tail":
		tail := make([]byte, 1+c.rng.IntN(40))
		for j := range tail {
			tail[j] = byte(c.rng.IntN(256))
		}
		if len(tail) >= 8 {
			// a frame header promising more than follows
			binary.BigEndian.PutUint32(tail, uint32(len(tail)+c.rng.IntN(100)))
		}
		if _, err := f.WriteAt(tail, int64(len(b))); err != nil {
			f.Truncate(int64(len(b))) // no room for it: no damage
			return
		}
	case "garbled entry":
		starts := entryStarts(h.file, b)
		if len(starts) < 3 {
			return // one entry at most: garbling the last is a torn tail
		}
		j := c.rng.IntN(len(starts) - 2) // starts ends with the file's end
		garble(starts[j], starts[j+1])
	case "lost entries":
		starts := entryStarts(h.file, b)
		if len(starts) < 2 {
			return // no whole entry
		}
		c.clusterSaw(i)
		cut := starts[max(0, len(starts)-2-c.rng.IntN(3))] // starts ends with the file's end
		if err := f.Truncate(int64(cut)); err != nil {
			c.t.Fatal(err)
		}
	case "damaged snapshot":
		if len(b) == 0 {
			return
		}
		if c.rng.IntN(2) == 0 {
			if err := f.Truncate(int64(c.rng.IntN(len(b)))); err != nil {
				c.t.Fatal(err)
			}
		} else {
			garble(0, len(b))
		}
	}
	c.damages[h.how+" of "+h.file]++
	if h.how != "torn tail" {
		class := "rules"
		if h.file == "leases.log" || h.file == "leases.json" {
			class = "leases"
		}
		c.mu.Lock()
		if c.damaged[i] == nil {
			c.damaged[i] = map[string]bool{}
		}
		c.damaged[i][class] = true
		c.mu.Unlock()
	}
	c.t.Logf("damage to n%d: %s of %s", i, h.how, h.file)
}

// clusterSaw tells each lease key homed at dead agent i what a live peer
// serves of it: what the cluster saw before i lost the last entries of its
// lease log (ckey.lostEntries).
func (c *crashCluster) clusterSaw(i int) {
	var keys []*ckey
	for _, k := range c.keys {
		if k.home == i && leaseKind(k.kind) {
			keys = append(keys, k)
		}
	}
	peer := c.procs[(i+1)%len(c.procs)]
	seen, err := readCrashKeys(peer, keys)
	if err != nil {
		c.t.Fatalf("reading %s before damaging n%d: %v", peer.name, i, err)
	}
	for _, k := range keys {
		k.lostEntries(seen[k])
	}
}

// entryStarts is where each entry of a log begins: both logs are frames
// (4-byte length, 4-byte CRC, body; package wal).
func entryStarts(file string, b []byte) []int {
	var starts []int
	for off := 0; off+8 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[off:]))
		if off+8+n > len(b) {
			break
		}
		starts = append(starts, off)
		off += 8 + n
	}
	return append(starts, len(b))
}
