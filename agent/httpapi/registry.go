package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// BrokerRegistration is one broker's registration: its address and, for a
// master (id 0), the full table of its topics. Slaves' topics are ignored,
// as the NameServer takes topic configuration only from masters.
type BrokerRegistration struct {
	Cluster    string                 `json:"cluster"`
	BrokerName string                 `json:"brokerName"`
	BrokerID   int64                  `json:"brokerId"`
	Addr       string                 `json:"addr"`
	HAAddr     string                 `json:"haAddr"`
	Zone       string                 `json:"zone,omitempty"`
	Topics     map[string]TopicConfig `json:"topics"`
	TTL        string                 `json:"ttl,omitempty"`
}

// TopicConfig is a topic's queue configuration on the registering broker.
type TopicConfig struct {
	ReadQueueNums  int `json:"readQueueNums"`
	WriteQueueNums int `json:"writeQueueNums"`
	Perm           int `json:"perm"`
	TopicSysFlag   int `json:"topicSysFlag"`
}

// RegisterResult tells a slave where its master is.
type RegisterResult struct {
	MasterAddr   string `json:"masterAddr"`
	HAServerAddr string `json:"haServerAddr"`
}

// RegisterBroker replaces the broker's registration on this agent. ttl 0
// means it lives as long as the agent. A broker is its name and id: the
// same broker registered under another cluster replaces its record (one
// key, so one op on every replica), never stands beside it.
func (s *Server) RegisterBroker(reg BrokerRegistration, ttl time.Duration) (RegisterResult, error) {
	if err := reg.validate(); err != nil {
		return RegisterResult{}, err
	}
	return s.registerBroker(reg, ttl)
}

// registerBroker applies reg (writeHTTP).
func (s *Server) registerBroker(reg BrokerRegistration, ttl time.Duration) (RegisterResult, error) {
	s.regMu.Lock()
	b := &routes.Broker{Cluster: reg.Cluster, Name: reg.BrokerName, ID: reg.BrokerID, Addr: reg.Addr, HAAddr: reg.HAAddr, Zone: reg.Zone}
	puts := []routes.Record{{Broker: b}}
	var deletes []string
	if reg.BrokerID == 0 {
		for topic, tc := range reg.Topics {
			puts = append(puts, routes.Record{Queue: &routes.Queue{Topic: topic, BrokerName: reg.BrokerName,
				ReadQueueNums: tc.ReadQueueNums, WriteQueueNums: tc.WriteQueueNums, Perm: tc.Perm, TopicSysFlag: tc.TopicSysFlag}})
		}
		for _, r := range s.table.LocalRecords(routes.QueuePrefix(reg.BrokerName)) {
			if _, keep := reg.Topics[r.Queue.Topic]; !keep {
				deletes = append(deletes, r.Key())
			}
		}
	}
	// Stamped before the lease is written, so it holds the stamps the
	// table will: a registration with other queue data than the one
	// served is later than every write this agent has seen, and served
	// on every agent (routes' recency).
	s.table.StampQueues(puts)
	key := routes.BrokerKey(reg.BrokerName, reg.BrokerID)
	var prefixes []string
	if reg.BrokerID == 0 {
		prefixes = []string{routes.QueuePrefix(reg.BrokerName)}
	}
	var res RegisterResult
	err := s.writeHTTP(key, prefixes, ttl, puts, deletes, func() {
		if reg.BrokerID != 0 {
			for _, m := range s.table.Brokers(reg.BrokerName) {
				if m.ID == 0 {
					res = RegisterResult{MasterAddr: m.Addr, HAServerAddr: m.HAAddr}
					break
				}
			}
		}
	})
	if err != nil {
		return RegisterResult{}, err
	}
	return res, nil
}

// UnregisterBroker removes a broker registered on this agent; ok is false
// when there was none under that cluster. A master takes its topics with
// it.
// An error means the removal could not be saved: nothing was withdrawn.
func (s *Server) UnregisterBroker(cluster, name string, id int64) (bool, error) {
	s.regMu.Lock()
	key := routes.BrokerKey(name, id)
	if r, ok := s.localRecord(key); !ok || r.Broker == nil || r.Broker.Cluster != cluster {
		s.regMu.Unlock()
		return false, nil // not ours, or the broker has moved to another cluster
	}
	return s.withdraw(key)
}

// withdraw withdraws an HTTP registration by its primary key, its lease
// dropped, and clears its TTL, in one host.Write: on disk before it
// returns, so a restart cannot bring it back. An error (503) before the
// change means the removal could not be written: nothing is withdrawn;
// after it, that the removal is not on disk yet. regMu must be held;
// withdraw lets go of it.
func (s *Server) withdraw(key string) (bool, error) {
	deletes := s.withdrawal(key)
	err := s.host.Write(func() {
		s.ttl.clear(key)
		s.regMu.Unlock()
	}, lease.Write{Lease: lease.Lease{Door: httpDoor, ID: key}, Deletes: deletes, Drop: true})
	if err != nil {
		if !errors.Is(err, host.ErrUnsaved) {
			s.regMu.Unlock()
		}
		return false, errorf(http.StatusServiceUnavailable, "%v", err)
	}
	return len(deletes) > 0, nil
}

// withdrawal is what withdrawing the registration at key deletes: its
// record and, for a master broker, its queues; nothing when it has none.
func (s *Server) withdrawal(key string) []string {
	r, ok := s.localRecord(key)
	if !ok {
		return nil
	}
	deletes := []string{key}
	if r.Broker != nil && r.Broker.ID == 0 {
		for _, q := range s.table.LocalRecords(routes.QueuePrefix(r.Broker.Name)) {
			deletes = append(deletes, q.Key())
		}
	}
	return deletes
}

// localRecord is our own record at exactly key.
func (s *Server) localRecord(key string) (routes.Record, bool) { return s.table.LocalRecord(key) }

// withdrawLocked is withdraw for an expiry, which nobody waits for: the
// lease's removal written first (so a restart cannot bring it back), the
// TTL cleared, the records withdrawn, without waiting for the disk (a
// crash before it restores the lease, not past its deadline). An error
// (503) means the removal could not be written: nothing is withdrawn.
// regMu must be held.
func (s *Server) withdrawLocked(key string) (ok bool, err error) {
	if _, err := s.host.Drop(httpDoor, key); err != nil {
		return false, errorf(http.StatusServiceUnavailable, "%v", err)
	}
	s.ttl.clear(key)
	deletes := s.withdrawal(key)
	if len(deletes) == 0 {
		return false, nil
	}
	return s.host.Apply(nil, deletes) // a withdrawal is never refused
}

func (r *BrokerRegistration) validate() error {
	if err := checkName("cluster", r.Cluster); err != nil {
		return err
	}
	if err := checkName("brokerName", r.BrokerName); err != nil {
		return err
	}
	if r.BrokerID < 0 {
		return fmt.Errorf("brokerId must be 0 (master) or a positive slave id, got %d", r.BrokerID)
	}
	if err := checkAddr("addr", r.Addr, true); err != nil {
		return err
	}
	if err := checkAddr("haAddr", r.HAAddr, false); err != nil {
		return err
	}
	if len(r.Topics) > maxTopicsPerBroker {
		return fmt.Errorf("topics: %d topics, at most %d per broker", len(r.Topics), maxTopicsPerBroker)
	}
	for topic, tc := range r.Topics {
		if err := checkTopic(topic); err != nil {
			return err
		}
		if err := tc.validate(topic); err != nil {
			return err
		}
	}
	return nil
}

func (tc TopicConfig) validate(topic string) error {
	for name, v := range map[string]int{"readQueueNums": tc.ReadQueueNums, "writeQueueNums": tc.WriteQueueNums} {
		if v < 0 || v > maxQueueNums {
			return fmt.Errorf("topic %q: %s must be from 0 to %d, got %d", topic, name, maxQueueNums, v)
		}
	}
	if tc.Perm < 0 || tc.Perm > 15 {
		return fmt.Errorf("topic %q: perm must be a bit set of 8 (priority), 4 (read), 2 (write), 1 (inherit), from 0 to 15, got %d", topic, tc.Perm)
	}
	if tc.TopicSysFlag < 0 {
		return fmt.Errorf("topic %q: topicSysFlag must not be negative, got %d", topic, tc.TopicSysFlag)
	}
	return nil
}
