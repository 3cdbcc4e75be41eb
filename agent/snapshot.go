package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/internal/atomicfile"
	"github.com/namecast/namecast/routes"
)

// membersFile remembers the gossip addresses of the members last seen
// alive, so an agent restarted with its data dir finds its cluster again
// without --join (Serf's snapshotter does the same).
const membersFile = "members.json"

// saveMembersLoop rewrites the snapshot in dir whenever the set of g's
// alive members changes (a membership change moves table's index), at
// most once a second, until ctx is done.
func saveMembersLoop(ctx context.Context, dir string, table *routes.Table, g *gossip.Gossip, log *slog.Logger) {
	var saved []string
	for {
		idx := table.Index()
		if addrs := aliveAddrs(g); !slices.Equal(addrs, saved) && len(addrs) > 0 {
			b, _ := json.Marshal(addrs)
			if err := atomicfile.Write(filepath.Join(dir, membersFile), b); err != nil {
				log.Error("saving known members to the data dir failed", "err", err)
			} else {
				saved = addrs
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		table.Wait(ctx, idx)
	}
}

// aliveAddrs lists the other alive members' gossip addresses, sorted.
func aliveAddrs(g *gossip.Gossip) []string {
	var out []string
	self := g.LocalAddr()
	for _, m := range g.Members() {
		if m.Status == gossip.StatusAlive && m.Addr != self {
			out = append(out, m.Addr)
		}
	}
	slices.Sort(out)
	return out
}

// snapshotAddrs reads the members the previous run saved in dir.
func snapshotAddrs(dir string, log *slog.Logger) []string {
	if dir == "" {
		return nil
	}
	path := filepath.Join(dir, membersFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var addrs []string
	if err := json.Unmarshal(b, &addrs); err != nil {
		log.Warn("saved members are unreadable; setting the file aside", "path", path, "err", err)
		_ = os.Rename(path, path+".corrupt")
		return nil
	}
	return addrs
}

// rejoinLoop has g try the saved members with backoff until one answers
// (then it calls joined), for at most rejoinFor: past that they are more
// likely gone than slow.
func rejoinLoop(ctx context.Context, g *gossip.Gossip, addrs []string, joined func(), log *slog.Logger) {
	const rejoinFor = 5 * time.Minute
	deadline := time.Now().Add(rejoinFor)
	backoff := 500 * time.Millisecond
	for time.Now().Before(deadline) {
		if n, _ := g.Join(addrs); n > 0 {
			joined()
			log.Info("rejoined the cluster from the data dir's member snapshot", "contacted", n)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
	log.Warn("no member from the data dir's snapshot answered", "tried", addrs)
}
