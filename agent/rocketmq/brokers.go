package rocketmq

import (
	"errors"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/routes"
)

// registration is a decoded REGISTER_BROKER header.
type registration struct {
	cluster, name string
	id            int64
	addr, haAddr  string
	zone          string
	timeout       time.Duration
	// actingMaster is nil for brokers before 5.0, which do not send
	// enableActingMaster; Java calls them "old version" brokers.
	actingMaster *bool
}

// registerResult is what a slave learns about its master (§5.2 step 12).
type registerResult struct {
	masterAddr, haAddr string
	// unsaved is why the agent's data dir could not write the
	// registration's lease, or why its record budget refused it: nothing
	// of it was applied, and the broker is told (it registers again
	// within 30 s).
	unsaved error
	// saving is the lease write to wait for, with bt.mu let go, before
	// the registration is acknowledged (lease.Saving).
	saving lease.Saving
}

// register applies a registration the way Java 5.x's RouteInfoManager does
// (§5.2), with this agent's records standing for Java's brokerAddrTable and
// topicQueueTable. ok is false for the first-registration guard (#4522).
//
// The lease is written before anything is applied, and res.saving is
// waited for after bt.mu is let go, so that registrations at the same
// moment share one fsync; a lease that cannot be written (res.unsaved)
// changes nothing.
func (s *Server) register(c *conn, r registration, body *remoting.RegisterBrokerBody) (res registerResult, ok bool) {
	bt := &s.brokers
	bt.mu.Lock()
	defer bt.mu.Unlock()
	key := liveKey{r.cluster, r.addr}
	prev := bt.live[key]
	if prev != nil && prev.name != r.name {
		// The address now serves another broker name: the old one is gone.
		_, sv, err := s.unregisterLocked(prev.cluster, prev.name, prev.addr, true)
		if err != nil {
			return registerResult{unsaved: err}, true
		}
		res.saving = sv // waited for below, by the new lease's (later) entry
		prev = nil
	}
	group := s.localGroup(r.cluster, r.name)
	var puts []routes.Record
	var deletes []string
	// Step 4: an address has one id; a slave promoted to master comes back
	// as id 0 from the address it had as a slave.
	for id, b := range group {
		if b.Addr == r.addr && id != r.id {
			deletes = append(deletes, routes.BrokerKey(r.name, id))
			delete(group, id)
		}
	}
	// Step 5: a newcomer under an id whose holder, on any agent, has a
	// higher state version is fenced off (5.x controller mode).
	if holder, fenced := s.fencedBy(r, body.DataVersion.StateVersion); fenced {
		s.log.Warn("registration fenced: another address holds this broker id with a newer state version",
			"broker", r.name, "id", r.id, "addr", r.addr, "holder", holder)
		sv, err := s.reg.Drop(door, leaseID(key))
		if err != nil {
			return registerResult{unsaved: err}, true
		}
		delete(bt.live, key)
		// A stale registration of ours under that id goes too.
		if b, ok := group[r.id]; ok && b.Addr == r.addr {
			s.reg.Apply(nil, []string{routes.BrokerKey(r.name, r.id)})
		}
		return registerResult{saving: sv}, true
	}
	// Step 6: an incremental (one-topic) registration before the first
	// full one would stand for the broker's whole table (#4522).
	_, known := group[r.id]
	if !known && len(body.Topics) == 1 {
		return registerResult{}, false
	}
	registerFirst := !known
	actingMaster := r.actingMaster != nil && *r.actingMaster
	b := routes.Broker{Cluster: r.cluster, Name: r.name, ID: r.id, Addr: r.addr, HAAddr: r.haAddr, Zone: r.zone,
		StateVersion: body.DataVersion.StateVersion, ActingMaster: actingMaster,
		Filters: strings.Join(body.FilterServers, ",")}
	// No stamp: the table stamps it, moving the stamp only when the
	// content changes or another agent's registration of the id is served
	// over this one, so re-registrations cost nothing; the stamp orders
	// "the latest registration" cluster-wide (routes' recency.go).
	puts = append(puts, routes.Record{Broker: &b})
	group[r.id] = b

	// Step 8: topic config comes from the master, or (5.x) from the slave
	// with the smallest id while no master is registered.
	isMaster := r.id == 0
	isPrimeSlave := !isMaster && r.actingMaster != nil && s.smallestID(r)
	if isMaster || isPrimeSlave {
		versionChanged := prev == nil || prev.version != body.DataVersion
		dv := body.DataVersion
		held := s.localQueues(r.name)
		stripWrite := isPrimeSlave && *r.actingMaster
		for topic, tc := range body.Topics {
			if _, has := held[topic]; has && !registerFirst && !versionChanged {
				continue // keeps an admin's wipe of write perm in force (§5.6)
			}
			if !validName(topic) {
				s.log.Warn("ignoring a topic whose name cannot be a route key", "broker", r.name, "topic", topic)
				continue
			}
			perm := tc.Perm
			if stripWrite {
				perm &^= remoting.PermWrite
			}
			q := routes.Queue{Topic: topic, BrokerName: r.name, ReadQueueNums: tc.ReadQueueNums,
				WriteQueueNums: tc.WriteQueueNums, Perm: perm, TopicSysFlag: tc.TopicSysFlag,
				From: r.id, StateVersion: dv.StateVersion, Counter: dv.Counter}
			puts = append(puts, routes.Record{Queue: &q})
		}
		// Step 9: static-topic mappings, under the same condition as
		// Java's (mappings.go).
		if registerFirst || versionChanged {
			puts = append(puts, s.mappingRecords(r, body)...)
		}
	}
	// The queue data written is stamped now, so the lease holds the
	// stamps the table will: later than every write this agent has seen,
	// so it is served everywhere over the older data of any agent
	// (routes' recency), whatever DataVersion counter that carries.
	s.reg.Table().StampQueues(puts)
	// Step 10: the live entry moves to this connection, once its lease,
	// with the records it will cover, is written.
	lb := &liveBroker{cluster: r.cluster, name: r.name, id: r.id, addr: r.addr, actingMaster: actingMaster,
		version: body.DataVersion, last: s.now(), timeout: r.timeout, conn: c}
	l := leaseOf(lb)
	sv, err := s.reg.Hold(l, l.RecordsAfter(s.reg.Table(), puts, deletes))
	if err != nil {
		if !errors.Is(err, routes.ErrBudget) { // the host logs those, once a minute
			s.log.Error("a broker registration could not be saved to the data dir; nothing of it is applied", "broker", r.name, "addr", r.addr, "err", err)
		}
		return registerResult{unsaved: err, saving: res.saving}, true
	}
	res.saving = sv
	if _, err := s.reg.Apply(puts, deletes); err != nil {
		// Past the agent's record budget: nothing of it is applied.
		return registerResult{unsaved: err, saving: sv}, true
	}
	bt.live[key] = lb
	if registerFirst {
		s.log.Info("broker registered", "cluster", r.cluster, "broker", r.name, "id", r.id, "addr", r.addr, "topics", len(body.Topics))
	}

	// Step 12: a slave learns its master, wherever the master registered.
	if r.id != 0 {
		for _, m := range s.reg.Table().Brokers(r.name) {
			if m.ID == 0 {
				res.masterAddr, res.haAddr = m.Addr, m.HAAddr
				break
			}
		}
	}
	return res, true
}

// smallestID reports whether no broker of r's group, on any agent, has an
// id below r's (ignoring r's own address, whose old id is being replaced).
func (s *Server) smallestID(r registration) bool {
	for _, b := range s.reg.Table().Brokers(r.name) {
		if b.ID < r.id && b.Addr != r.addr {
			return false
		}
	}
	return true
}

// unregisterLocked removes the broker at (cluster, addr) under name (§5.4):
// its live entry and every id of the group at that address. When no member
// of the group is left on this agent, the group's queue data and static-topic
// mappings go too; when
// members remain but no master, and the group runs slave-acting-master,
// its queues lose write permission. bt.mu must be held.
//
// The lease's removal is written before the records go, so a restart
// does not resume the broker; the caller waits for sv, with bt.mu let go,
// before it acknowledges. When asked (the broker's UNREGISTER_BROKER),
// a removal that cannot be written withdraws nothing and is the error;
// otherwise (its connection closed, it expired) nobody can be refused,
// and the records go while the removal is saved once the disk allows
// (lease.Holder.Forget).
func (s *Server) unregisterLocked(cluster, name, addr string, asked bool) (ok bool, sv lease.Saving, err error) {
	bt := &s.brokers
	key := liveKey{cluster, addr}
	lb := bt.live[key]
	if lb != nil {
		if !asked {
			sv = s.reg.Forget(door, leaseID(key))
		} else if sv, err = s.reg.Drop(door, leaseID(key)); err != nil {
			s.log.Error("a broker's removal could not be saved to the data dir; it stays registered", "broker", name, "addr", addr, "err", err)
			return false, sv, err
		}
	}
	delete(bt.live, key)
	group := s.localGroup(cluster, name)
	var deletes []string
	for id, b := range group {
		if b.Addr == addr {
			deletes = append(deletes, routes.BrokerKey(name, id))
			delete(group, id)
		}
	}
	if len(deletes) == 0 {
		return lb != nil, sv, nil
	}
	var puts []routes.Record
	if len(group) == 0 {
		for _, p := range []string{routes.QueuePrefix(name), routes.MappingPrefix(name)} {
			for _, r := range s.reg.LocalRecords(p) {
				deletes = append(deletes, r.Key())
			}
		}
	} else if _, hasMaster := group[0]; !hasMaster && s.actingMasterGroup(cluster, name) {
		for _, r := range s.reg.LocalRecords(routes.QueuePrefix(name)) {
			if q := *r.Queue; q.Perm&remoting.PermWrite != 0 {
				q.Perm &^= remoting.PermWrite
				puts = append(puts, routes.Record{Queue: &q})
			}
		}
	}
	s.reg.Apply(puts, deletes)
	return true, sv, nil
}

// actingMasterGroup reports whether any member of the group, on any
// agent, registered with enableActingMaster.
func (s *Server) actingMasterGroup(cluster, name string) bool {
	for _, b := range s.reg.Table().Brokers(name) {
		if b.Cluster == cluster && b.ActingMaster {
			return true
		}
	}
	return false
}

// fencedBy reports whether another address holds r's broker id, on any
// agent, with a state version above sv (§5.2 step 5, over the whole
// cluster's table).
func (s *Server) fencedBy(r registration, sv int64) (string, bool) {
	for _, b := range s.reg.Table().Brokers(r.name) {
		if b.Cluster == r.cluster && b.ID == r.id && b.Addr != r.addr && b.StateVersion > sv {
			return b.Addr, true
		}
	}
	return "", false
}

// localGroup is this agent's broker records of one group, by id. A record
// of the same broker name under another cluster is not of the group: a
// registration under the new cluster replaces it (one key per name and id),
// and the old cluster's unregistration leaves the new record alone.
func (s *Server) localGroup(cluster, name string) map[int64]routes.Broker {
	group := map[int64]routes.Broker{}
	for _, r := range s.reg.LocalRecords(routes.BrokerPrefix(name)) {
		if r.Broker != nil && r.Broker.Cluster == cluster {
			group[r.Broker.ID] = *r.Broker
		}
	}
	return group
}

// localQueues is this agent's queue data of one broker name, by topic.
func (s *Server) localQueues(name string) map[string]routes.Queue {
	held := map[string]routes.Queue{}
	for _, r := range s.reg.LocalRecords(routes.QueuePrefix(name)) {
		if r.Queue != nil {
			held[r.Queue.Topic] = *r.Queue
		}
	}
	return held
}

// unregister handles UNREGISTER_BROKER and reports whether anything was
// registered here; an error means the removal is not saved and, when it
// could not be written, nothing was withdrawn.
func (s *Server) unregister(cluster, name, addr string) (bool, error) {
	bt := &s.brokers
	bt.mu.Lock()
	ok, sv, err := s.unregisterLocked(cluster, name, addr, true)
	bt.mu.Unlock()
	if err != nil {
		return false, err
	}
	return ok, sv.Wait()
}

// dataVersion returns the stored DataVersion of (cluster, addr).
func (s *Server) dataVersion(cluster, addr string) (remoting.DataVersion, bool) {
	bt := &s.brokers
	bt.mu.Lock()
	defer bt.mu.Unlock()
	if lb := bt.live[liveKey{cluster, addr}]; lb != nil {
		return lb.version, true
	}
	return remoting.DataVersion{}, false
}
