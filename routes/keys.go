package routes

import (
	"strconv"
	"strings"
)

// The whole keyspace. A record's key is derived from its content, so a put
// for the same broker, topic queue or URL always lands on the same key.
//
//	broker/{brokerName}/{brokerId}            a RocketMQ broker
//	queue/{brokerName}/{topic}                a topic's queue data on a broker
//	url/{interface}/{category}/{url}          a Dubbo-style service URL
//	kv/{namespace}/{key}                      a RocketMQ KV config entry (a rule)
//	znode{path}[\x00{part}]                   a ZooKeeper node that is not a Dubbo URL
//	                                          (Dubbo 3's instances, mappings and metadata
//	                                          among them: the application views, apps.go)
//	mapping/{brokerName}/{topic}              a 5.x static topic's mapping on a broker
//
// Components are joined verbatim: names are validated by the agent not to
// contain '/', and the URL, which may, is always the last component.
//
// A broker is identified by its name and id, as RocketMQ's brokerAddrTable
// is keyed by broker name: its cluster is content, not identity, so a
// broker registered again under another cluster replaces its record in one
// op on every replica instead of leaving the old one beside it.
const (
	brokerPrefix  = "broker/"
	queuePrefix   = "queue/"
	urlPrefix     = "url/"
	kvPrefix      = "kv/"
	znodePrefix   = "znode"
	mappingPrefix = "mapping/"
)

// Every record of one kind: prefixes for scans (LocalRecords) and for
// telling a changed key's kind (OnChange), so doors need not spell keys.
const (
	EveryBroker  = brokerPrefix
	EveryQueue   = queuePrefix
	EveryURL     = urlPrefix
	EveryMapping = mappingPrefix
)

// ParseBrokerKey is the inverse of BrokerKey; ok is false for any other key.
func ParseBrokerKey(key string) (name string, id int64, ok bool) {
	rest, ok := strings.CutPrefix(key, brokerPrefix)
	name, idText, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || name == "" {
		return "", 0, false
	}
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil {
		return "", 0, false
	}
	return name, id, true
}

// ParseQueueKey is the inverse of QueueKey; ok is false for any other key.
func ParseQueueKey(key string) (brokerName, topic string, ok bool) {
	rest, ok := strings.CutPrefix(key, queuePrefix)
	brokerName, topic, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || brokerName == "" || topic == "" {
		return "", "", false
	}
	return brokerName, topic, true
}

// ParseURLKey is the inverse of URLKey; ok is false for any other key. The
// URL, last, may hold '/'.
func ParseURLKey(key string) (iface, category, url string, ok bool) {
	rest, ok := strings.CutPrefix(key, urlPrefix)
	parts := strings.SplitN(rest, "/", 3)
	if !ok || len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// KVKey is the key of one KV config entry.
func KVKey(namespace, key string) string { return kvPrefix + namespace + "/" + key }

// KVPrefix selects every entry of one namespace.
func KVPrefix(namespace string) string { return kvPrefix + namespace + "/" }

// BrokerKey is the key of a broker registration.
func BrokerKey(brokerName string, brokerID int64) string {
	return brokerPrefix + brokerName + "/" + strconv.FormatInt(brokerID, 10)
}

// BrokerPrefix selects every id registered under one broker name, for
// callers that replace a broker's registration wholesale.
func BrokerPrefix(brokerName string) string {
	return brokerPrefix + brokerName + "/"
}

// QueueKey is the key of one topic's queue data on one broker.
func QueueKey(brokerName, topic string) string {
	return queuePrefix + brokerName + "/" + topic
}

// QueuePrefix selects every topic's queue data on one broker.
func QueuePrefix(brokerName string) string {
	return queuePrefix + brokerName + "/"
}

// URLKey is the key of one service URL.
func URLKey(iface, category, url string) string {
	return urlPrefix + iface + "/" + category + "/" + url
}

// URLPrefix selects every URL of one interface and category.
func URLPrefix(iface, category string) string {
	return urlPrefix + iface + "/" + category + "/"
}

// Record is one registration. Exactly one field is set.
type Record struct {
	Broker  *Broker  `json:"b,omitempty"`
	Queue   *Queue   `json:"q,omitempty"`
	URL     *URL     `json:"u,omitempty"`
	KV      *KV      `json:"v,omitempty"`
	Znode   *Znode   `json:"z,omitempty"`
	Mapping *Mapping `json:"m,omitempty"`
}

// KV is a RocketMQ NameServer config entry (PUT_KV_CONFIG). KV entries are
// cluster-scoped rules: written with ApplyRules, readable on every agent.
type KV struct {
	Namespace string `json:"n"`
	Key       string `json:"k"`
	Value     string `json:"v"`
}

// Broker is a RocketMQ broker's address under (cluster, name, id); id 0 is
// the master (DLedger brokers first register as -1).
type Broker struct {
	Cluster string `json:"c"`
	Name    string `json:"n"`
	ID      int64  `json:"i"`
	Addr    string `json:"a"`
	HAAddr  string `json:"h,omitempty"`
	Zone    string `json:"z,omitempty"`
	// StateVersion is the registration's DataVersion.stateVersion (5.x
	// controller mode): of two addresses claiming one id, the higher wins.
	StateVersion int64 `json:"sv,omitempty"`
	// ActingMaster is the registration's enableActingMaster (5.x).
	ActingMaster bool `json:"am,omitempty"`
	// Filters is the broker's filter server list (RegisterBrokerBody's
	// filterServerList), comma-joined so that the record stays comparable
	// and costs nothing when empty, as it nearly always is.
	Filters string `json:"f,omitempty"`
	// Stamp is the origin table's Lamport time when this registration
	// last changed or came back (recency.go): it orders several agents'
	// records of one id, and "the latest registration" of a group (views
	// take zone and acting-master from it), without comparing clocks.
	// Zero in a put: ApplyLocal stamps it.
	Stamp uint64 `json:"l,omitempty"`
}

// Queue is a topic's queue configuration on one broker name. Several
// agents may hold one for the same (broker name, topic): the agent of the
// member that provided it, and copies on the agents of the group's other
// members (so the group keeps its queues while any member is registered,
// wherever). Views pick one by precedence (see queueVals.outranks).
type Queue struct {
	Topic          string `json:"t"`
	BrokerName     string `json:"n"`
	ReadQueueNums  int    `json:"r"`
	WriteQueueNums int    `json:"w"`
	Perm           int    `json:"p"`
	TopicSysFlag   int    `json:"f,omitempty"`
	// From is the broker id whose registration provided the data: 0 for
	// the master, else a 5.x prime slave's id.
	From int64 `json:"b,omitempty"`
	// StateVersion and Counter are the providing registration's
	// DataVersion: of the broker's configurations, the controller's
	// order (stateVersion) and the broker's own count of changes.
	StateVersion int64 `json:"sv,omitempty"`
	Counter      int64 `json:"dv,omitempty"`
	// Stamp is the origin table's Lamport time of the registration that
	// wrote this queue data (recency.go), kept by its copies: the later
	// write is served. Zero in a put that is not a copy: ApplyLocal (or
	// StampQueues, before a lease is written) stamps it.
	Stamp uint64 `json:"l,omitempty"`
	// Copy marks a copy held by the agent of another member of the group.
	Copy bool `json:"cp,omitempty"`
}

// URL is a service URL registered for an interface and category. URL holds
// the canonical string; identity is the whole of it. The other fields are
// what a ZooKeeper client wrote with it (a Dubbo URL leaf), kept so every
// agent shows the leaf as written; they are empty for a URL registered
// otherwise.
type URL struct {
	Interface string `json:"i"`
	Category  string `json:"c"`
	URL       string `json:"u"`
	// Path is the znode path as the client spelled it, when that differs
	// from the canonical one (parameters in another order, other escapes).
	Path string `json:"p,omitempty"`
	// Data is the znode's data (Dubbo writes the registrant's IP).
	Data string `json:"d,omitempty"`
	// Owner is the ephemeral owner: the ZooKeeper session that created it.
	Owner int64 `json:"e,omitempty"`
	// Stamp is the table's Lamport time when the record was written
	// (Table.Stamp): of two agents' records for one key, the later wins.
	Stamp uint64 `json:"l,omitempty"`
}

// Key is where the record lives inside its origin, or "" for a record with
// not exactly one field set.
func (r Record) Key() string {
	n := 0
	for _, set := range []bool{r.Broker != nil, r.Queue != nil, r.URL != nil, r.KV != nil, r.Znode != nil, r.Mapping != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return ""
	case r.Broker != nil:
		return BrokerKey(r.Broker.Name, r.Broker.ID)
	case r.Queue != nil:
		return QueueKey(r.Queue.BrokerName, r.Queue.Topic)
	case r.URL != nil:
		return URLKey(r.URL.Interface, r.URL.Category, r.URL.URL)
	case r.Znode != nil:
		return ZnodeKey(r.Znode.Path, r.Znode.Part)
	case r.Mapping != nil:
		return MappingKey(r.Mapping.BrokerName, r.Mapping.Topic)
	default:
		return KVKey(r.KV.Namespace, r.KV.Key)
	}
}

func (r Record) equal(o Record) bool {
	switch {
	case r.Broker != nil:
		return o.Broker != nil && *r.Broker == *o.Broker
	case r.Queue != nil:
		return o.Queue != nil && *r.Queue == *o.Queue
	case r.URL != nil:
		return o.URL != nil && *r.URL == *o.URL
	case r.KV != nil:
		return o.KV != nil && *r.KV == *o.KV
	case r.Znode != nil:
		return o.Znode != nil && r.Znode.equal(*o.Znode)
	case r.Mapping != nil:
		return o.Mapping != nil && *r.Mapping == *o.Mapping
	}
	return false
}

// clone copies the record so the table never shares memory with callers.
func (r Record) clone() Record {
	switch {
	case r.Broker != nil:
		b := *r.Broker
		return Record{Broker: &b}
	case r.Queue != nil:
		q := *r.Queue
		return Record{Queue: &q}
	case r.URL != nil:
		u := *r.URL
		return Record{URL: &u}
	case r.KV != nil:
		kv := *r.KV
		return Record{KV: &kv}
	case r.Znode != nil:
		z := *r.Znode
		z.Data = copyData(z.Data)
		return Record{Znode: &z}
	case r.Mapping != nil:
		m := *r.Mapping
		return Record{Mapping: &m}
	}
	return Record{}
}

// valid reports whether a record received from the network is one the views
// can index: one field set, and the key components free of '/'.
func (r Record) valid() bool {
	if r.kinds() != 1 {
		return false
	}
	switch {
	case r.Broker != nil:
		return component(r.Broker.Cluster) && component(r.Broker.Name)
	case r.Queue != nil:
		return component(r.Queue.Topic) && component(r.Queue.BrokerName)
	case r.KV != nil:
		return component(r.KV.Namespace) && r.KV.Key != ""
	case r.Znode != nil:
		return r.Znode.valid()
	case r.Mapping != nil:
		return r.Mapping.valid()
	default:
		return component(r.URL.Interface) && component(r.URL.Category) && r.URL.URL != "" &&
			len(r.URL.Path) <= MaxZnodePath && !strings.ContainsRune(r.URL.Path, 0)
	}
}

// stamp is the record's Lamport stamp (Broker, Queue, URL and Znode
// records carry one), 0 for none.
func (r Record) stamp() uint64 {
	switch {
	case r.Broker != nil:
		return r.Broker.Stamp
	case r.Queue != nil:
		return r.Queue.Stamp
	case r.URL != nil:
		return r.URL.Stamp
	case r.Znode != nil:
		return r.Znode.Stamp
	}
	return 0
}

func component(s string) bool { return s != "" && !strings.Contains(s, "/") }
