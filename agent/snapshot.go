package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/internal/atomicfile"
)

// membersFile remembers the gossip addresses of the members last seen
// alive, so an agent restarted with its data dir finds its cluster again
// without --join (Serf's snapshotter does the same).
const membersFile = "members.json"

// saveMembersLoop rewrites the snapshot whenever the set of alive members
// changes, at most once a second.
func (a *Agent) saveMembersLoop() {
	var saved []string
	for {
		idx := a.table.Index()
		if addrs := a.aliveAddrs(); !slices.Equal(addrs, saved) && len(addrs) > 0 {
			b, _ := json.Marshal(addrs)
			if err := atomicfile.Write(filepath.Join(a.cfg.DataDir, membersFile), b); err != nil {
				a.log.Error("saving known members to the data dir failed", "err", err)
			} else {
				saved = addrs
			}
		}
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(time.Second):
		}
		a.table.Wait(a.ctx, idx)
	}
}

// aliveAddrs lists the other alive members' gossip addresses, sorted.
func (a *Agent) aliveAddrs() []string {
	var out []string
	self := a.gossip.LocalAddr()
	for _, m := range a.gossip.Members() {
		if m.Status == gossip.StatusAlive && m.Addr != self {
			out = append(out, m.Addr)
		}
	}
	slices.Sort(out)
	return out
}

// snapshotAddrs reads the members saved by the previous run.
func (a *Agent) snapshotAddrs() []string {
	if a.cfg.DataDir == "" {
		return nil
	}
	path := filepath.Join(a.cfg.DataDir, membersFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var addrs []string
	if err := json.Unmarshal(b, &addrs); err != nil {
		a.log.Warn("saved members are unreadable; setting the file aside", "path", path, "err", err)
		_ = os.Rename(path, path+".corrupt")
		return nil
	}
	return addrs
}

// rejoinLoop tries the saved members with backoff until one answers, for
// at most rejoinFor: past that they are more likely gone than slow.
func (a *Agent) rejoinLoop(addrs []string) {
	const rejoinFor = 5 * time.Minute
	deadline := time.Now().Add(rejoinFor)
	backoff := 500 * time.Millisecond
	for time.Now().Before(deadline) {
		if n, _ := a.gossip.Join(addrs); n > 0 {
			a.readiness.joined.Store(true)
			a.log.Info("rejoined the cluster from the data dir's member snapshot", "contacted", n)
			return
		}
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
	a.log.Warn("no member from the data dir's snapshot answered", "tried", addrs)
}
