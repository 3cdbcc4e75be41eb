package httpapi

import (
	"fmt"
	"net/http"
	"time"

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
	res, sv, err := s.registerBroker(reg, ttl)
	if err := s.settled(sv, err); err != nil {
		return RegisterResult{}, err
	}
	return res, nil
}

// registerBroker applies reg under regMu; the caller waits for the lease
// write (settled) after.
func (s *Server) registerBroker(reg BrokerRegistration, ttl time.Duration) (RegisterResult, lease.Saving, error) {
	s.regMu.Lock()
	defer s.regMu.Unlock()
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
	sv, err := s.holdHTTP(key, prefixes, ttl, puts, deletes)
	if err != nil {
		return RegisterResult{}, sv, err
	}
	if _, err := s.host.Apply(puts, deletes); err != nil {
		return RegisterResult{}, sv, storeError(err)
	}
	var res RegisterResult
	if reg.BrokerID != 0 {
		for _, m := range s.table.Brokers(reg.BrokerName) {
			if m.ID == 0 {
				res = RegisterResult{MasterAddr: m.Addr, HAServerAddr: m.HAAddr}
				break
			}
		}
	}
	return res, sv, nil
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

// withdraw is withdrawLocked, then waiting for the lease's removal with
// regMu let go. regMu must be held; withdraw lets go of it.
func (s *Server) withdraw(key string) (bool, error) {
	ok, sv, err := s.withdrawLocked(key)
	s.regMu.Unlock()
	if err := s.settled(sv, err); err != nil {
		return false, err
	}
	return ok, nil
}

// localRecord is our own record at exactly key.
func (s *Server) localRecord(key string) (routes.Record, bool) { return s.table.LocalRecord(key) }

// withdrawLocked withdraws an HTTP registration by its primary key, its
// lease's removal written first (so a restart cannot bring it back), and
// clears its TTL; the removal is on disk once sv's Wait returns. An error
// (503) means the removal could not be written: nothing is withdrawn, and
// the registration stays as it was. regMu must be held.
func (s *Server) withdrawLocked(key string) (ok bool, sv lease.Saving, err error) {
	sv, err = s.host.Drop(httpDoor, key)
	if err != nil {
		return false, sv, errorf(http.StatusServiceUnavailable, "%v", err)
	}
	s.ttl.clear(key)
	r, ok := s.localRecord(key)
	if !ok {
		return false, sv, nil
	}
	deletes := []string{key}
	if r.Broker != nil && r.Broker.ID == 0 {
		for _, q := range s.table.LocalRecords(routes.QueuePrefix(r.Broker.Name)) {
			deletes = append(deletes, q.Key())
		}
	}
	ok, err = s.host.Apply(nil, deletes) // a withdrawal is never refused
	return ok, sv, err
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
