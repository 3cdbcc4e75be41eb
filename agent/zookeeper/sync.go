package zookeeper

import (
	"strings"
	"sync"

	"github.com/namecast/namecast/routes"
)

// dirtySet collects the keys of table records that changed, from the
// table's OnChange hook (which runs with the table locked, so it only
// notes the key and wakes the sync loop). Keys are deduplicated: a burst of
// gossip about one path costs one refresh.
type dirtySet struct {
	mu   sync.Mutex
	keys map[string]struct{}
	cmds bool // a delete command changed (commands.go)
	wake chan struct{}
}

// cmdPrefix is the table key prefix of delete commands.
var cmdPrefix = routes.KVKey(cmdNamespace, "")

func (d *dirtySet) init() {
	d.keys = map[string]struct{}{}
	d.wake = make(chan struct{}, 1)
}

func (d *dirtySet) add(key string) {
	cmd := strings.HasPrefix(key, cmdPrefix)
	if !cmd && !strings.HasPrefix(key, routes.EveryURL) && !strings.HasPrefix(key, routes.ZnodePrefix+"/") {
		return // brokers, queues, other KV: not znodes
	}
	d.mu.Lock()
	if cmd {
		d.cmds = true
	} else {
		d.keys[key] = struct{}{}
	}
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// takeCmds reports whether a command changed since the last call.
func (d *dirtySet) takeCmds() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.cmds
	d.cmds = false
	return c
}

func (d *dirtySet) take() map[string]struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.keys) == 0 {
		return nil
	}
	k := d.keys
	d.keys = map[string]struct{}{}
	return k
}

// syncLoop brings the tree up to date with changes that arrive by gossip
// (local writes refresh it themselves before they reply).
func (s *Server) syncLoop() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.dirty.wake:
			s.syncDirty()
			if s.dirty.takeCmds() {
				s.runCommands()
			}
		}
	}
}

// syncDirty refreshes every path whose records changed.
func (s *Server) syncDirty() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncDirtyLocked()
}

func (s *Server) syncDirtyLocked() {
	for {
		keys := s.dirty.take()
		if keys == nil {
			return
		}
		for k := range keys {
			if p, ok := pathOfKey(k); ok {
				s.refresh(p)
			}
		}
	}
}
