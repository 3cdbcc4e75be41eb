package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Health is the agent's answer to GET /v1/health.
type Health struct {
	Node    string `json:"node"`    // the agent's member name
	Status  string `json:"status"`  // HealthOK or HealthLeaving
	Members int    `json:"members"` // live members the agent knows of
}

// Health statuses.
const (
	HealthOK      = "ok"
	HealthLeaving = "leaving"
)

// Member is one agent of the cluster as the asked agent sees it.
type Member struct {
	Name   string            `json:"name"`
	Addr   string            `json:"addr"`   // gossip host:port
	Status string            `json:"status"` // one of the Member* statuses
	Tags   map[string]string `json:"tags"`
	// Since is when the agent asked saw the member take its status, on
	// that agent's clock: how long a dead member has been dead.
	Since time.Time `json:"since"`
}

// Member statuses.
const (
	MemberAlive   = "alive"
	MemberSuspect = "suspect"
	MemberDead    = "dead"
	MemberLeft    = "left"
)

// BrokerRegistration is the body of PUT /v1/brokers: one RocketMQ broker and
// the topics it serves. Each PUT replaces the broker's previous
// registration, and renews its TTL.
type BrokerRegistration struct {
	Cluster    string                 `json:"cluster"`
	BrokerName string                 `json:"brokerName"`
	BrokerID   int64                  `json:"brokerId"` // 0 is the master
	Addr       string                 `json:"addr"`     // host:port clients connect to
	HAAddr     string                 `json:"haAddr,omitempty"`
	Zone       string                 `json:"zone,omitempty"` // for zone-aware routing
	Topics     map[string]TopicConfig `json:"topics"`

	// TTL withdraws the registration everywhere unless it is renewed in
	// time. Zero keeps it as long as the agent lives. On the wire it is a
	// duration string such as "120s".
	TTL time.Duration `json:"-"`
}

// TopicConfig is one topic's queues on the registering broker.
type TopicConfig struct {
	ReadQueueNums  int `json:"readQueueNums"`
	WriteQueueNums int `json:"writeQueueNums"`
	Perm           int `json:"perm"` // RocketMQ permission bits, see PermRead
	TopicSysFlag   int `json:"topicSysFlag"`
}

// RocketMQ permission bits of TopicConfig.Perm and QueueData.Perm.
const (
	PermInherit  = 1
	PermWrite    = 2
	PermRead     = 4
	PermPriority = 8
)

// brokerRegistrationJSON is BrokerRegistration without its methods, so they
// can encode through it without recursing.
type brokerRegistrationJSON BrokerRegistration

// MarshalJSON writes TTL as the duration string the agent expects.
func (b BrokerRegistration) MarshalJSON() ([]byte, error) {
	var ttl string
	if b.TTL > 0 {
		ttl = formatDuration(b.TTL)
	}
	return json.Marshal(struct {
		brokerRegistrationJSON
		TTL string `json:"ttl,omitempty"`
	}{brokerRegistrationJSON(b), ttl})
}

// UnmarshalJSON reads the PUT /v1/brokers shape and rejects unknown fields,
// so a misspelt key in a hand-written file (say "broker_id") fails instead of
// registering a zero value, which for brokerId would claim to be a master.
func (b *BrokerRegistration) UnmarshalJSON(data []byte) error {
	var v struct {
		*brokerRegistrationJSON
		TTL string `json:"ttl"`
	}
	v.brokerRegistrationJSON = (*brokerRegistrationJSON)(b)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	b.TTL = 0
	if v.TTL != "" {
		d, err := time.ParseDuration(v.TTL)
		if err != nil || d < 0 {
			return fmt.Errorf("bad ttl %q: want a duration such as \"120s\"", v.TTL)
		}
		b.TTL = d
	}
	return nil
}

// RegisterBrokerResult is the answer to PUT /v1/brokers: the registration
// as the agent took it (its topics' names, sorted; the TTL it applies) and,
// for a slave whose master is registered, the master's addresses, as
// RocketMQ's RegisterBrokerResult gives them (empty for a master).
type RegisterBrokerResult struct {
	Cluster      string   `json:"cluster"`
	BrokerName   string   `json:"brokerName"`
	BrokerID     int64    `json:"brokerId"`
	Addr         string   `json:"addr"`
	HAAddr       string   `json:"haAddr,omitempty"`
	Topics       []string `json:"topics"`
	TTL          string   `json:"ttl,omitempty"`
	MasterAddr   string   `json:"masterAddr,omitempty"`
	HAServerAddr string   `json:"haServerAddr,omitempty"`
}

// TopicRoute is RocketMQ's TopicRouteData: where a topic's queues live.
// BrokerDatas are ordered nearest first by the agent's RTT estimate.
type TopicRoute struct {
	QueueDatas  []QueueData  `json:"queueDatas"`
	BrokerDatas []BrokerData `json:"brokerDatas"`
}

// QueueData is a topic's queues on one broker name.
type QueueData struct {
	BrokerName     string `json:"brokerName"`
	ReadQueueNums  int    `json:"readQueueNums"`
	WriteQueueNums int    `json:"writeQueueNums"`
	Perm           int    `json:"perm"`
	TopicSysFlag   int    `json:"topicSysFlag"`
}

// BrokerData is one broker name's addresses by broker id (0 = master).
type BrokerData struct {
	Cluster     string           `json:"cluster"`
	BrokerName  string           `json:"brokerName"`
	BrokerAddrs map[int64]string `json:"brokerAddrs"`
}

// ClusterInfo is RocketMQ's cluster table: every broker name's addresses,
// and the broker names of each cluster.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData `json:"brokerAddrTable"`
	ClusterAddrTable map[string][]string   `json:"clusterAddrTable"`
}

// RegisteredURL is the answer to PUT /v1/urls: the URL in the canonical form
// the registry keys it by, and where it was filed.
type RegisteredURL struct {
	URL       string `json:"url"`
	Interface string `json:"interface"`
	Category  string `json:"category"`
}

// TopicSummary is one topic of TopicSummaries: where it lives and its
// queues, summed over its brokers.
type TopicSummary struct {
	Topic       string   `json:"topic"`
	Clusters    []string `json:"clusters"`
	Brokers     []string `json:"brokers"`
	ReadQueues  int      `json:"readQueues"`
	WriteQueues int      `json:"writeQueues"`
	Perms       []int    `json:"perms"`
}

// ServiceSummary is one interface of ServiceSummaries: its providers and
// consumers (interface-level URLs), the Dubbo 3 application instances
// that export it (application-level), and the applications and versions
// they name.
type ServiceSummary struct {
	Interface    string   `json:"interface"`
	Providers    int      `json:"providers"`
	Consumers    int      `json:"consumers"`
	AppInstances int      `json:"appInstances"`
	Applications []string `json:"applications"`
	Versions     []string `json:"versions"`
}
