package zookeeper

import (
	"time"

	"github.com/namecast/namecast/agent/doorkit"
)

// Container nodes (createContainer, Curator's creatingParentContainersIfNeeded)
// are reaped once empty, as ZooKeeper's ContainerManager does: a container
// that has had a child and is found empty at two checks in a row
// (Config.ContainerCheck apart) is deleted cluster-wide. ZooKeeper checks
// every minute by default; a client must expect the reap at any time once
// a container is empty, and recreate it (Curator does). Each agent checks
// the containers it saw get a child; two agents reaping one container
// delete the same rule, which is harmless, and a child created meanwhile
// through another agent keeps its path, which then exists implicitly.

// containerLoop runs the checks until the server closes.
func (s *Server) containerLoop() {
	doorkit.Every(s.ctx, s.cfg.ContainerCheck, func(time.Time) {
		s.reapContainers()
		s.runCommands() // collects the commands of gone agents
	})
}

// reapContainers runs one check.
func (s *Server) reapContainers() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	var keys, paths []string
	for p := range s.containers {
		n := s.tree.nodes[p]
		switch {
		case n == nil || !n.container:
			delete(s.containers, p)
		case len(n.children) > 0 || !n.hadChild:
			n.emptySeen = false
		case !n.emptySeen:
			n.emptySeen = true
		default:
			k, _ := s.holdersAt(p)
			keys = append(keys, k...)
			paths = append(paths, p)
		}
	}
	s.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	s.log.Debug("reaping empty containers", "paths", paths)
	s.applyRules(nil, keys) // logs a failure; the next check retries
	s.mu.Lock()
	defer s.mu.Unlock()
	s.syncDirtyLocked()
	for _, p := range paths {
		s.refresh(p)
	}
}

// noteContainer keeps s.containers in step with n's content at p. s.mu
// held.
func (s *Server) noteContainer(p string, n *znode) {
	if n.container {
		s.containers[p] = struct{}{}
	}
}
