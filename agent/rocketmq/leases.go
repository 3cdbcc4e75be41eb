package rocketmq

import (
	"encoding/json"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/routes"
)

// door names this package's leases (package lease): one per live entry,
// so that an agent restarted with its data dir resumes every broker that
// was registered here, with its DataVersion (a wipe of write perm stays in
// force) and its last heartbeat (it expires when it would have).
const door = "rocketmq"

// savedBroker is a live entry as a lease keeps it.
type savedBroker struct {
	Cluster      string               `json:"cluster"`
	Name         string               `json:"name"`
	ID           int64                `json:"id"`
	Addr         string               `json:"addr"`
	ActingMaster bool                 `json:"actingMaster,omitempty"`
	Version      remoting.DataVersion `json:"version"`
	LastMillis   int64                `json:"last"`
	TimeoutMs    int64                `json:"timeoutMs"`
}

func leaseID(k liveKey) string { return k.cluster + "/" + k.addr }

// leaseOf is lb's lease: its broker record and its group's queue data and
// static-topic mappings, until its timeout from the last heartbeat.
func leaseOf(lb *liveBroker) lease.Lease {
	st, _ := json.Marshal(savedBroker{Cluster: lb.cluster, Name: lb.name, ID: lb.id, Addr: lb.addr,
		ActingMaster: lb.actingMaster, Version: lb.version, LastMillis: lb.last.UnixMilli(), TimeoutMs: lb.timeout.Milliseconds()})
	return lease.Lease{Door: door, ID: leaseID(liveKey{lb.cluster, lb.addr}),
		Keys:     []string{routes.BrokerKey(lb.name, lb.id)},
		Prefixes: []string{routes.QueuePrefix(lb.name), routes.MappingPrefix(lb.name)},
		Deadline: lb.last.Add(lb.timeout), Renewed: lb.last, State: st}
}

// refreshLocked saves lb's new heartbeat, lazily (lease.Store.PutLease).
// bt.mu must be held.
func (s *Server) refreshLocked(lb *liveBroker) {
	if err := s.reg.PutLease(leaseOf(lb)); err != nil {
		s.log.Warn("a broker's heartbeat could not be saved to the data dir; a restart may expire it early", "broker", lb.name, "addr", lb.addr, "err", err)
	}
}

// restoreLeases resumes the brokers registered here before the agent
// restarted. They have no connection: their next registration (over a new
// one) or heartbeat confirms them, or they expire.
func (s *Server) restoreLeases() {
	bt := &s.brokers
	bt.mu.Lock()
	defer bt.mu.Unlock()
	for _, l := range s.reg.RestoredLeases(door) {
		var sb savedBroker
		if err := json.Unmarshal(l.State, &sb); err != nil || sb.Addr == "" {
			s.log.Warn("ignoring an unreadable saved broker", "lease", l.ID, "err", err)
			continue
		}
		key := liveKey{sb.Cluster, sb.Addr}
		bt.live[key] = &liveBroker{cluster: sb.Cluster, name: sb.Name, id: sb.ID, addr: sb.Addr,
			actingMaster: sb.ActingMaster, version: sb.Version, last: time.UnixMilli(sb.LastMillis),
			timeout: time.Duration(sb.TimeoutMs) * time.Millisecond}
		s.log.Info("broker resumed from before the restart; waiting for its next registration",
			"cluster", sb.Cluster, "broker", sb.Name, "id", sb.ID, "addr", sb.Addr)
	}
}
