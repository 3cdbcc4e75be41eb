package remoting

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// JSONForm selects how maps keyed by broker id are written (§3.1, §3.2).
type JSONForm uint8

const (
	// StandardJSON quotes broker-id keys ({"0":"host:port"}) and escapes
	// non-ASCII text, as a 5.x NameServer answers clients >= 4.9.4.
	StandardJSON JSONForm = iota
	// LegacyJSON writes broker-id keys bare ({0:"host:port"}), as fastjson
	// does by default. Not valid JSON, but the only form Go clients up to
	// v2.1.1 parse correctly: with quoted keys every address lands on
	// broker id 0 and a slave can replace its master.
	LegacyJSON
)

// acceptStandardJSONOnly is the GET_ROUTEINFO_BY_TOPIC ext field with which
// old clients opt in to StandardJSON.
const acceptStandardJSONOnly = "acceptStandardJsonOnly"

// RouteFormFor picks the route-body form for a GET_ROUTEINFO_BY_TOPIC
// request the way Java does: standard from VersionStandardJSON on, or when
// the client asks for it; legacy otherwise.
func RouteFormFor(req *Command) JSONForm {
	if req.Version >= VersionStandardJSON || strings.EqualFold(req.ExtFields[acceptStandardJSONOnly], "true") {
		return StandardJSON
	}
	return LegacyJSON
}

// QueueData is one broker group's queues for a topic.
type QueueData struct {
	BrokerName     string `json:"brokerName"`
	ReadQueueNums  int    `json:"readQueueNums"`
	WriteQueueNums int    `json:"writeQueueNums"`
	Perm           int    `json:"perm"`
	// TopicSysFlag is written under its 4.9+ name only, as every current
	// NameServer does; brokers before 4.9 spelled it topicSynFlag, which
	// UnmarshalJSON still reads.
	TopicSysFlag int `json:"topicSysFlag"`
}

// UnmarshalJSON accepts the pre-4.9 spelling topicSynFlag too.
func (q *QueueData) UnmarshalJSON(b []byte) error {
	var w struct {
		BrokerName     string `json:"brokerName"`
		ReadQueueNums  int    `json:"readQueueNums"`
		WriteQueueNums int    `json:"writeQueueNums"`
		Perm           int    `json:"perm"`
		TopicSysFlag   *int   `json:"topicSysFlag"`
		TopicSynFlag   *int   `json:"topicSynFlag"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*q = QueueData{BrokerName: w.BrokerName, ReadQueueNums: w.ReadQueueNums, WriteQueueNums: w.WriteQueueNums, Perm: w.Perm}
	switch {
	case w.TopicSysFlag != nil:
		q.TopicSysFlag = *w.TopicSysFlag
	case w.TopicSynFlag != nil:
		q.TopicSysFlag = *w.TopicSynFlag
	}
	return nil
}

func (q *QueueData) appendJSON(dst []byte, ascii bool) []byte {
	dst = append(dst, `{"brokerName":`...)
	dst = appendJSONString(dst, q.BrokerName, ascii)
	dst = append(dst, `,"perm":`...)
	dst = strconv.AppendInt(dst, int64(q.Perm), 10)
	dst = append(dst, `,"readQueueNums":`...)
	dst = strconv.AppendInt(dst, int64(q.ReadQueueNums), 10)
	dst = append(dst, `,"topicSysFlag":`...)
	dst = strconv.AppendInt(dst, int64(q.TopicSysFlag), 10)
	dst = append(dst, `,"writeQueueNums":`...)
	dst = strconv.AppendInt(dst, int64(q.WriteQueueNums), 10)
	return append(dst, '}')
}

// BrokerData is one broker group: its members' addresses by broker id
// (0 is the master).
type BrokerData struct {
	Cluster     string           `json:"cluster"`
	BrokerName  string           `json:"brokerName"`
	BrokerAddrs map[int64]string `json:"brokerAddrs"`
	// ZoneName (5.x) is omitted when empty, as Java omits null.
	ZoneName string `json:"zoneName,omitempty"`
	// EnableActingMaster (5.x) is always written: 4.x readers ignore it.
	EnableActingMaster bool `json:"enableActingMaster"`
}

func (d *BrokerData) appendJSON(dst []byte, form JSONForm) []byte {
	ascii := form == StandardJSON
	dst = append(dst, `{"brokerAddrs":`...)
	dst = appendBrokerAddrs(dst, d.BrokerAddrs, form)
	dst = append(dst, `,"brokerName":`...)
	dst = appendJSONString(dst, d.BrokerName, ascii)
	dst = append(dst, `,"cluster":`...)
	dst = appendJSONString(dst, d.Cluster, ascii)
	dst = append(dst, `,"enableActingMaster":`...)
	dst = strconv.AppendBool(dst, d.EnableActingMaster)
	if d.ZoneName != "" {
		dst = append(dst, `,"zoneName":`...)
		dst = appendJSONString(dst, d.ZoneName, ascii)
	}
	return append(dst, '}')
}

// TopicRouteData is the GET_ROUTEINFO_BY_TOPIC response body (§3.2), and
// the REGISTER_TOPIC_IN_NAMESRV request body.
type TopicRouteData struct {
	OrderTopicConf    string              `json:"orderTopicConf,omitempty"`
	QueueDatas        []QueueData         `json:"queueDatas"`
	BrokerDatas       []BrokerData        `json:"brokerDatas"`
	FilterServerTable map[string][]string `json:"filterServerTable"`
	// TopicQueueMappingByBroker (5.x static topics) maps broker name to
	// its mapping of the topic's logical queues; omitted when empty, as
	// Java omits null.
	TopicQueueMappingByBroker map[string]TopicQueueMappingInfo `json:"topicQueueMappingByBroker,omitempty"`
}

// AppendJSON appends the body in the given form. It is always compact and
// always has brokerAddrs, queueDatas and filterServerTable, even when
// empty: Go client v2.1.2 slices brokerAddrs' text by hand and panics
// without it, and fails without queueDatas (§3.7). Lists keep the order
// given; map keys are sorted.
func (t *TopicRouteData) AppendJSON(dst []byte, form JSONForm) []byte {
	ascii := form == StandardJSON
	dst = append(dst, `{"brokerDatas":[`...)
	for i := range t.BrokerDatas {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = t.BrokerDatas[i].appendJSON(dst, form)
	}
	dst = append(dst, `],"filterServerTable":{`...)
	for i, addr := range sortedKeys(t.FilterServerTable) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, addr, ascii)
		dst = append(dst, ':')
		dst = appendStringList(dst, t.FilterServerTable[addr], ascii)
	}
	dst = append(dst, '}')
	if t.OrderTopicConf != "" {
		dst = append(dst, `,"orderTopicConf":`...)
		dst = appendJSONString(dst, t.OrderTopicConf, ascii)
	}
	dst = append(dst, `,"queueDatas":[`...)
	for i := range t.QueueDatas {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = t.QueueDatas[i].appendJSON(dst, ascii)
	}
	dst = append(dst, ']')
	if len(t.TopicQueueMappingByBroker) > 0 {
		dst = append(dst, `,"topicQueueMappingByBroker":{`...)
		for i, name := range sortedKeys(t.TopicQueueMappingByBroker) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, name, ascii)
			dst = append(dst, ':')
			m := t.TopicQueueMappingByBroker[name]
			dst = m.appendJSON(dst, form)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendJSON writes the mapping as fastjson does: fields in name order,
// scope left out when null (empty), currIdMap's integer keys bare in the
// legacy form and quoted in the standard one, like brokerAddrs.
func (m *TopicQueueMappingInfo) appendJSON(dst []byte, form JSONForm) []byte {
	ascii := form == StandardJSON
	dst = append(dst, `{"bname":`...)
	dst = appendJSONString(dst, m.Bname, ascii)
	dst = append(dst, `,"currIdMap":{`...)
	ids := make([]int32, 0, len(m.CurrIDMap))
	for l := range m.CurrIDMap {
		ids = append(ids, l)
	}
	slices.Sort(ids)
	for i, l := range ids {
		if i > 0 {
			dst = append(dst, ',')
		}
		if form == StandardJSON {
			dst = append(dst, '"')
		}
		dst = strconv.AppendInt(dst, int64(l), 10)
		if form == StandardJSON {
			dst = append(dst, '"')
		}
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(m.CurrIDMap[l]), 10)
	}
	dst = append(dst, `},"dirty":`...)
	dst = strconv.AppendBool(dst, m.Dirty)
	dst = append(dst, `,"epoch":`...)
	dst = strconv.AppendInt(dst, m.Epoch, 10)
	if m.Scope != "" {
		dst = append(dst, `,"scope":`...)
		dst = appendJSONString(dst, m.Scope, ascii)
	}
	dst = append(dst, `,"topic":`...)
	dst = appendJSONString(dst, m.Topic, ascii)
	dst = append(dst, `,"totalQueues":`...)
	dst = strconv.AppendInt(dst, int64(m.TotalQueues), 10)
	return append(dst, '}')
}
