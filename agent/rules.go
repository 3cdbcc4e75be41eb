package agent

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/namecast/namecast/routes"
)

// rulesFile keeps the cluster-scoped rules in the data dir, so they survive
// a restart of every agent at once.
const rulesFile = "rules.json"

// loadRules merges the rules saved by the previous run. A corrupt file is
// set aside and reported; peers will supply what it held.
func (a *Agent) loadRules() {
	if a.cfg.DataDir == "" {
		return
	}
	path := filepath.Join(a.cfg.DataDir, rulesFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var snap routes.Snapshot
	if err == nil {
		err = json.Unmarshal(b, &snap)
	}
	if err != nil || snap.Origin != routes.RulesOrigin {
		a.log.Warn("saved rules are unreadable; setting the file aside", "path", path, "err", err)
		_ = os.Rename(path, path+".corrupt")
		return
	}
	snap.Authoritative = false
	res := a.table.Merge(snap)
	a.log.Info("loaded saved rules", "rules", res.Applied)
}

// rulesLoop saves the rules whenever they change (at most once a second)
// and collects old rule tombstones now and then.
func (a *Agent) rulesLoop() {
	var saved routes.DigestEntry
	lastGC := time.Now()
	for {
		idx := a.table.Index()
		if a.cfg.DataDir != "" {
			if e := a.table.Digest()[routes.RulesOrigin]; e != saved {
				if err := a.saveRules(); err != nil {
					a.log.Error("saving rules to the data dir failed", "err", err)
				} else {
					saved = e
				}
			}
		}
		if time.Since(lastGC) > 10*time.Minute {
			if n := a.table.CollectRuleTombstones(); n > 0 {
				a.log.Info("collected rule tombstones", "count", n)
			}
			lastGC = time.Now()
		}
		select {
		case <-a.ctx.Done():
			return
		case <-time.After(time.Second):
		}
		a.table.Wait(a.ctx, idx)
	}
}

func (a *Agent) saveRules() error {
	snap, _ := a.table.Snapshot(routes.RulesOrigin)
	b, err := json.Marshal(snap)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(a.cfg.DataDir, rulesFile), b)
}
