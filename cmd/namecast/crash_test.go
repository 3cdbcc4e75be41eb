package main

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCrashConsistency is a crash-consistency test in the spirit of
// Jepsen and ALICE. Writers put and delete, through all three doors of
// a cluster of agents with --data-dir, HTTP registrations and rules,
// RocketMQ KV entries and broker registrations (register, a changed
// registration, unregister; a connection lost withdraws its brokers),
// ZooKeeper ephemeral znodes (create, setData,
// delete in a session that re-attaches after each restart) and
// persistent znodes (rules), while each round does one of: kill -9 an
// agent at a random moment, fill its disk and free it again, or both
// (sometimes restarting it while the disk is still full); a killed
// agent's files are sometimes damaged before it restarts (see
// crashCluster.damage for what each kind of damage may destroy). After
// each round the checker reads every key through its door on every
// agent, until they agree, and fails on any acknowledged write missing
// (lost) or acknowledged delete or overwritten value served (resurrected).
//
// Each key is written through one agent only (its home), so its history
// is one writer's; the model is in crash_model_test.go. A key whose last
// operation got no answer may hold either outcome until the next answer.
//
// It runs on one agent alone (whatever comes back comes from its own
// disk: no peer re-supplies a rule) and on a cluster of three.
//
// NAMECAST_CRASH_ROUNDS sets the rounds of each (default 8, a few tens
// of seconds in all); the disk-full episodes need a mount namespace
// (see smallDisks).
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	rounds := 8
	if n, err := strconv.Atoi(os.Getenv("NAMECAST_CRASH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	t.Run("alone", func(t *testing.T) { crashConsistency(t, 1, 3, rounds) })
	t.Run("cluster", func(t *testing.T) { crashConsistency(t, 3, 6, rounds) })
}

func crashConsistency(t *testing.T, agents, nwriters, rounds int) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	c := startCrashCluster(t, agents, seed)
	var writers []*crashWriter
	for id := range nwriters {
		home := id % len(c.procs)
		w := &crashWriter{id: id, home: home, p: c.procs[home], c: c, hc: &http.Client{Timeout: 10 * time.Second},
			zk: &crashZK{addr: c.procs[home].zk}, rng: rand.New(rand.NewPCG(seed, uint64(id)))}
		for _, kind := range crashKinds {
			for j := range 3 {
				k := &ckey{kind: kind, name: fmt.Sprintf("%s-w%d-%d", kind, id, j), home: home, allowed: []kstate{{}}, since: []kstate{{}}}
				w.keys = append(w.keys, k)
				c.keys = append(c.keys, k)
			}
		}
		writers = append(writers, w)
	}
	t.Cleanup(func() {
		for _, w := range writers {
			w.zk.close()
			if w.rmq != nil {
				w.rmq.Close()
			}
		}
	})
	var lost, resurrected, lostToDamage, either int
	for round := range rounds {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for _, w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						w.step()
					}
				}
			}()
		}
		c.fault()
		close(stop)
		wg.Wait()
		l, r, d, e := c.check(round, writers)
		lost, resurrected, lostToDamage, either = lost+l, resurrected+r, lostToDamage+d, either+e
	}
	var ops, acked, refused, unanswered int
	for _, w := range writers {
		ops, acked, refused, unanswered = ops+w.ops, acked+w.acked, refused+w.refused, unanswered+w.unanswered
		lost, resurrected, lostToDamage = lost+w.lost, resurrected+w.resurrected, lostToDamage+w.lostToDamage
		for _, p := range w.problems {
			t.Errorf("seen by writer %d: %s", w.id, p)
		}
	}
	var damage []string
	for _, k := range slices.Sorted(maps.Keys(c.damages)) {
		damage = append(damage, fmt.Sprintf("%s %d", k, c.damages[k]))
	}
	t.Logf("operations %d (acknowledged %d, refused %d, unanswered %d), agents %d, crashes %d, disk-full episodes %d (restarts on a full disk %d, refused %d), damage [%s], lost to damage %d, in flight at a fault %d, lost %d, resurrected %d",
		ops, acked, refused, unanswered, len(c.procs), c.crashes, c.fullEpisodes, c.restartsFull, c.refusedFull, strings.Join(damage, ", "), lostToDamage, either, lost, resurrected)
}

// fault does one round's fault while the writers run.
func (c *crashCluster) fault() {
	pause := func() { time.Sleep(time.Duration(200+c.rng.IntN(600)) * time.Millisecond) }
	pause() // a random moment under load
	i := c.rng.IntN(len(c.procs))
	what := 0 // kill
	if c.disks {
		what = c.rng.IntN(3) // kill, fill, fill and kill
	}
	var free, spare func()
	if what > 0 {
		free, spare = c.fillDisk(i)
		pause()
	}
	if what != 1 {
		c.kill(i)
		if c.rng.IntN(3) > 0 {
			c.damage(i)
		}
		if free != nil && c.rng.IntN(2) == 0 {
			// Two pages free: the agent starts, or refuses to, naming
			// what it could not write (then the disk is freed).
			spare()
			c.restart(i, free)
			return
		}
	}
	if free != nil {
		free()
	}
	if what != 1 {
		c.restart(i, nil)
	}
}

// check reads every key on every agent until each agent serves what is
// owed and all agree, and reports what does not by the deadline. It
// returns what it found lost, resurrected, lost to damage (allowed), and
// how many keys were left either way by an unanswered operation.
func (c *crashCluster) check(round int, writers []*crashWriter) (lost, resurrected, lostToDamage, either int) {
	var keys []*ckey
	for _, w := range writers {
		w.zkAttach() // a session that expired meanwhile is judged here
		keys = append(keys, w.keys...)
	}
	deadline := time.Now().Add(45 * time.Second)
	var reads []map[*ckey]kstate
	var bad []string
	for {
		reads, bad = reads[:0], bad[:0]
		for _, w := range writers {
			w.zk.ping() // keep the sessions heard while the check runs
		}
		for _, p := range c.procs {
			got, err := readCrashKeys(p, keys)
			if err != nil {
				bad = append(bad, err.Error())
				break
			}
			reads = append(reads, got)
		}
		if len(bad) == 0 {
			for _, k := range keys {
				first := reads[0][k]
				for i, r := range reads {
					got := r[k]
					if v := k.judge(got, c.mayLose(k.kind, k.home)); v != vOK {
						bad = append(bad, fmt.Sprintf("n%d serves %s %s, owed %s; its operations: %v", i, k, got, k.allowedString(), k.history))
					} else if got != first {
						bad = append(bad, fmt.Sprintf("agents disagree on %s: n0 %s, n%d %s", k, first, i, got))
					}
				}
			}
		}
		if len(bad) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(bad) > 0 {
		for _, b := range bad {
			c.t.Errorf("round %d: %s", round, b)
		}
		if len(reads) < len(c.procs) {
			c.t.FailNow()
		}
	}
	for _, k := range keys {
		got := reads[0][k]
		verdict := vOK
		for _, r := range reads {
			if v := k.judge(r[k], c.mayLose(k.kind, k.home)); v != vOK {
				verdict = v
			}
		}
		switch {
		case verdict == vLost:
			lost++
		case verdict == vResurrected:
			resurrected++
		case !slices.Contains(k.allowed, got):
			lostToDamage++
		case len(k.allowed) > 1:
			either++
		}
		k.checked(got)
	}
	c.checked()
	c.t.Logf("round %d: lost %d, resurrected %d, lost to damage %d, in flight at the fault %d", round, lost, resurrected, lostToDamage, either)
	return lost, resurrected, lostToDamage, either
}
