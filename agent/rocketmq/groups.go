package rocketmq

import (
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
// when its last member of the group leaves (or an admin deletes the topic,
// by a command to every agent holding the group). The master's agent
// leaving, or dying with the master's host, then takes nothing away from
// the slave's group, in whatever order its deletes arrive; and when the
// master registers again, its own records outrank the copies (routes'
// queue precedence: master over slave, the later write, original over
// copy) and the copies follow them. A member registered on several agents
// (a broker registers with every agent in its namesrvAddr) provides its
// data on each: an agent's own records of a provider registered on it are
// never turned into copies, so they stay when another agent lets go.

// deletedTopicMemory is how long a topic deleted here by an admin command
// is not copied back from an agent that has not run the command yet.
const deletedTopicMemory = commandTTL

// deletedTopic is a topic's queue data deleted here by an admin command:
// the same or an older write of the group's data is not copied back; a
// later one (the broker created the topic again) is.
type deletedTopic struct {
	at                    time.Time
	stamp                 uint64
	stateVersion, counter int64
}

func deletedTopicOf(q *routes.Queue, at time.Time) deletedTopic {
	return deletedTopic{at: at, stamp: q.Stamp, stateVersion: q.StateVersion, counter: q.Counter}
}

// covers reports whether q is the deleted write or an older one: by the
// write's stamp (routes' recency), then, between writes of one stamp (an
// agent that stamps no queue data), by its DataVersion.
func (d deletedTopic) covers(q routes.Queue) bool {
	if q.Stamp != d.stamp {
		return q.Stamp < d.stamp
	}
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
	name, topic, ok := routes.ParseQueueKey(key)
	all := false
	if !ok {
		if name, _, ok = routes.ParseBrokerKey(key); !ok {
			return
		}
		all = true
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
	for _, m := range table.Brokers(name) {
		hasMaster = hasMaster || m.ID == 0
		actingMaster = actingMaster || m.ActingMaster
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
	for _, p := range picks {
		want, have := p.Queue, mine[p.Topic]
		_, has := mine[p.Topic]
		switch {
		case p.Origin == self:
			// Ours is what routes answer with: the original, or a copy
			// that is all that is left of the topic while the group has
			// a member here (Java keeps it too). A copy is never taken
			// for the group having dropped the topic: the provider's
			// agent withdraws its records one op at a time, in whatever
			// order gossip brings them, and an admin's delete reaches
			// this agent as a command (commands.go).
			want = have
		case has && !have.Copy && have.From == p.From && s.providesHereLocked(name, have.From):
			// The same provider registered here too (a broker registers
			// with every agent in its namesrvAddr): this agent's
			// registration holds the data as much as the other's, and
			// stays when the other agent lets go.
			want = have
		default:
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
	if len(puts) > 0 {
		s.reg.Apply(puts, nil)
	}
}

// providesHereLocked reports whether broker id of group name is registered
// on this agent (its live entry is here). bt.mu must be held.
func (s *Server) providesHereLocked(name string, id int64) bool {
	for _, lb := range s.brokers.live {
		if lb.name == name && lb.id == id {
			return true
		}
	}
	return false
}
