package httpapi

import (
	"fmt"
	"net/http"
	"time"

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
	key := routes.BrokerKey(reg.BrokerName, reg.BrokerID)
	var prefixes []string
	if reg.BrokerID == 0 {
		prefixes = []string{routes.QueuePrefix(reg.BrokerName)}
	}
	if err := s.holdHTTP(key, prefixes, ttl, puts); err != nil {
		return RegisterResult{}, err
	}
	s.host.Apply(puts, deletes)
	var res RegisterResult
	if reg.BrokerID != 0 {
		for _, m := range s.table.Brokers(reg.BrokerName) {
			if m.ID == 0 {
				res = RegisterResult{MasterAddr: m.Addr, HAServerAddr: m.HAAddr}
				break
			}
		}
	}
	return res, nil
}

// UnregisterBroker removes a broker registered on this agent; ok is false
// when there was none under that cluster. A master takes its topics with
// it.
// An error means the removal could not be saved: nothing was withdrawn.
func (s *Server) UnregisterBroker(cluster, name string, id int64) (bool, error) {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	key := routes.BrokerKey(name, id)
	if r, ok := s.localRecord(key); !ok || r.Broker == nil || r.Broker.Cluster != cluster {
		return false, nil // not ours, or the broker has moved to another cluster
	}
	return s.withdrawLocked(key)
}

// localRecord is our own record at exactly key.
func (s *Server) localRecord(key string) (routes.Record, bool) { return s.table.LocalRecord(key) }

// withdrawLocked withdraws an HTTP registration by its primary key, its
// lease first (so a restart cannot bring it back), and clears its TTL. An
// error (503) means the lease's removal could not be saved: nothing is
// withdrawn, and the registration stays as it was.
func (s *Server) withdrawLocked(key string) (bool, error) {
	if err := s.host.DropLease(httpDoor, key); err != nil {
		return false, errorf(http.StatusServiceUnavailable, "%v", err)
	}
	s.ttl.clear(key)
	r, ok := s.localRecord(key)
	if !ok {
		return false, nil
	}
	deletes := []string{key}
	if r.Broker != nil && r.Broker.ID == 0 {
		for _, q := range s.table.LocalRecords(routes.QueuePrefix(r.Broker.Name)) {
			deletes = append(deletes, q.Key())
		}
	}
	return s.host.Apply(nil, deletes), nil
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
