package chaos

import (
	"fmt"
	"slices"
	"time"

	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/routes"
)

// Registration is one call a client makes to an agent: a service URL or a
// RocketMQ broker (master with its topics, or slave).
type Registration struct {
	// URL is a Dubbo service URL. With dynamic=false it is a cluster rule:
	// it belongs to no node and takes no TTL.
	URL string
	// The broker, when URL is empty.
	Cluster    string
	BrokerName string
	BrokerID   int64
	Addr       string
	Topics     []string // a master's topics; ignored for slaves
	// TTL, when non-zero, withdraws the registration unless renewed in time.
	TTL time.Duration
}

// Queue numbers of every generated topic; only their presence matters.
const (
	queueNums = 4
	queuePerm = 6
)

// Rule reports whether r is a cluster rule rather than a node's record.
func (r Registration) Rule() bool {
	if r.URL == "" {
		return false
	}
	u, err := dubbo.Parse(r.URL)
	return err == nil && !u.Dynamic()
}

// Key is the primary key the agent files the registration under: what an
// unregistration or a TTL names.
func (r Registration) Key() string {
	if r.URL != "" {
		rec, err := urlRecord(r.URL)
		if err != nil {
			return ""
		}
		return rec.Key()
	}
	return routes.BrokerKey(r.BrokerName, r.BrokerID)
}

// Records are the records the agent makes of r, worked out here from the
// rules of the API rather than asked of the agent.
func (r Registration) Records() ([]routes.Record, error) {
	if r.URL != "" {
		rec, err := urlRecord(r.URL)
		if err != nil {
			return nil, err
		}
		return []routes.Record{rec}, nil
	}
	recs := []routes.Record{{Broker: &routes.Broker{Cluster: r.Cluster, Name: r.BrokerName, ID: r.BrokerID, Addr: r.Addr}}}
	if r.BrokerID == 0 {
		for _, t := range slices.Sorted(slices.Values(r.Topics)) {
			recs = append(recs, routes.Record{Queue: &routes.Queue{Topic: t, BrokerName: r.BrokerName,
				ReadQueueNums: queueNums, WriteQueueNums: queueNums, Perm: queuePerm}})
		}
	}
	return recs, nil
}

// TopicConfig is the queue configuration every generated topic has, for
// systems that register brokers through the agent's API.
func TopicConfig() (readQueueNums, writeQueueNums, perm int) {
	return queueNums, queueNums, queuePerm
}

func urlRecord(raw string) (routes.Record, error) {
	u, err := dubbo.Parse(raw)
	if err != nil {
		return routes.Record{}, fmt.Errorf("chaos: bad generated URL %q: %w", raw, err)
	}
	return routes.Record{URL: &routes.URL{Interface: u.Interface(), Category: u.Category(), URL: u.String()}}, nil
}

func (r Registration) String() string {
	if r.URL != "" {
		return r.URL
	}
	return fmt.Sprintf("broker %s/%s/%d %v", r.Cluster, r.BrokerName, r.BrokerID, r.Topics)
}
