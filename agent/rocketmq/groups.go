package rocketmq

import (
	"strings"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/routes"
)

// A broker group's members register on different agents (a master and its
// slave run on different hosts, each beside its own agent). Java keeps a
// group's queue data while any member is registered; so here every agent
// that holds a member of a group keeps a copy of the group's queue data as
// routes answer it cluster-wide (routes.Queue.Copy), and withdraws it only
// when its last member of the group leaves. The master's agent leaving, or
// dying with the master's host, then takes nothing away from the slave's
// group; and when the master registers again, its own records outrank the
// copies (routes' queue precedence: master over slave, newer DataVersion,
// original over copy) and the copies follow them.

// deletedTopicMemory is how long a topic deleted here by an admin command
// is not copied back from an agent that has not run the command yet.
const deletedTopicMemory = commandTTL

// deletedTopic is a topic's queue data deleted here by an admin command:
// the same or an older configuration of the group is not copied back; a
// newer one (the broker created the topic again) is.
type deletedTopic struct {
	at                    time.Time
	stateVersion, counter int64
}

func (d deletedTopic) covers(q routes.Queue) bool {
	return q.StateVersion < d.stateVersion || q.StateVersion == d.stateVersion && q.Counter <= d.counter
}

// groupChanges collects, from the table's OnChange hook, which groups and
// topics changed since the last sync, so a sync looks only at those.
type groupChanges struct {
	mu     sync.Mutex
	topics map[string]map[string]bool // broker name -> topics; nil: every topic
}

// note is the OnChange hook: it runs with the table locked, so it only
// records the key.
func (g *groupChanges) note(key string) {
	var name, topic string
	var all bool
	switch {
	case strings.HasPrefix(key, "queue/"):
		name, topic, _ = strings.Cut(key[len("queue/"):], "/")
	case strings.HasPrefix(key, "broker/"):
		rest := key[len("broker/"):]
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			return
		}
		name, all = rest[:i], true
	default:
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.topics == nil {
		g.topics = map[string]map[string]bool{}
	}
	cur, seen := g.topics[name]
	switch {
	case all:
		g.topics[name] = nil
	case seen && cur == nil: // already every topic
	default:
		if cur == nil {
			cur = map[string]bool{}
			g.topics[name] = cur
		}
		cur[topic] = true
	}
}

func (g *groupChanges) take() map[string]map[string]bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.topics
	g.topics = nil
	return out
}

// syncGroups brings this agent's queue data of every group it holds a
// live member of, and that changed, in line with the group's cluster-wide
// data.
func (s *Server) syncGroups() {
	changed := s.groupChanges.take()
	if len(changed) == 0 {
		return
	}
	bt := &s.brokers
	bt.mu.Lock()
	defer bt.mu.Unlock()
	now := s.now()
	for k, d := range s.deletedTopics {
		if now.Sub(d.at) > deletedTopicMemory {
			delete(s.deletedTopics, k)
		}
	}
	held := map[string]bool{}
	for _, lb := range bt.live {
		held[lb.name] = true
	}
	for name, topics := range changed {
		if held[name] {
			s.syncGroupLocked(name, topics)
		}
	}
}

// syncGroupLocked is syncGroups for one group: every topic when topics is
// nil (a member came, went or changed), else those. bt.mu must be held.
func (s *Server) syncGroupLocked(name string, topics map[string]bool) {
	table := s.reg.Table()
	self := table.Local()
	hasMaster, actingMaster := false, false
	providers := map[int64]bool{}
	for _, m := range table.Brokers(name) {
		hasMaster = hasMaster || m.ID == 0
		actingMaster = actingMaster || m.ActingMaster
		providers[m.ID] = true
	}
	mine := s.localQueues(name)
	var picks []routes.QueuePick
	if topics == nil {
		picks = table.QueuePicks(name)
		topics = map[string]bool{}
		for topic := range mine {
			topics[topic] = true
		}
		for _, p := range picks {
			topics[p.Topic] = true
		}
	} else {
		for topic := range topics {
			if p, ok := table.QueuePick(name, topic); ok {
				picks = append(picks, p)
			}
		}
	}
	var puts []routes.Record
	var deletes []string
	for _, p := range picks {
		want, have := p.Queue, mine[p.Topic]
		_, has := mine[p.Topic]
		if p.Origin == self {
			// Our copy is all that is left of the topic. If its provider
			// is registered (and so holds no such topic), the group
			// dropped it; while the provider is away, Java keeps it too.
			if have.Copy && providers[have.From] {
				deletes = append(deletes, routes.QueueKey(name, p.Topic))
				continue
			}
			want = have
		} else {
			if d, ok := s.deletedTopics[name+"/"+p.Topic]; ok && d.covers(p.Queue) {
				continue
			}
			want.Copy = true
		}
		// Java clears WRITE on a group left without a master in
		// slave-acting-master mode (§5.4).
		if !hasMaster && actingMaster {
			want.Perm &^= remoting.PermWrite
		}
		if !has || want != have {
			puts = append(puts, routes.Record{Queue: &want})
		}
	}
	if len(puts) > 0 || len(deletes) > 0 {
		s.reg.Apply(puts, deletes)
	}
}
