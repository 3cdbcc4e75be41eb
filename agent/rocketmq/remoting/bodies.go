package remoting

import "strconv"

// The small bodies of §3.3 and §3.4. Each has json tags so that Unmarshal
// (or encoding/json, for the standard form) reads and writes it, and an
// AppendJSON that writes exactly what a Java NameServer sends.

// ClusterInfo is the GET_BROKER_CLUSTER_INFO response body.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData `json:"brokerAddrTable"`
	ClusterAddrTable map[string][]string   `json:"clusterAddrTable"`
}

// AppendJSON appends the body in LegacyJSON, the only form Java ever sends
// it in; Java tools parse either, but some dashboards only know this one.
func (ci *ClusterInfo) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"brokerAddrTable":{`...)
	for i, name := range sortedKeys(ci.BrokerAddrTable) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, name, false)
		dst = append(dst, ':')
		bd := ci.BrokerAddrTable[name]
		dst = bd.appendJSON(dst, LegacyJSON)
	}
	dst = append(dst, `},"clusterAddrTable":{`...)
	for i, cluster := range sortedKeys(ci.ClusterAddrTable) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, cluster, false)
		dst = append(dst, ':')
		dst = appendStringList(dst, ci.ClusterAddrTable[cluster], false)
	}
	return append(dst, '}', '}')
}

// BrokerMemberGroup is one broker group as GET_BROKER_MEMBER_GROUP (5.x)
// reports it.
type BrokerMemberGroup struct {
	Cluster     string           `json:"cluster"`
	BrokerName  string           `json:"brokerName"`
	BrokerAddrs map[int64]string `json:"brokerAddrs"`
}

// AppendJSON appends the whole GET_BROKER_MEMBER_GROUP response body,
// {"brokerMemberGroup":{...}}, in LegacyJSON as Java sends it.
func (g *BrokerMemberGroup) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"brokerMemberGroup":{"brokerAddrs":`...)
	dst = appendBrokerAddrs(dst, g.BrokerAddrs, LegacyJSON)
	dst = append(dst, `,"brokerName":`...)
	dst = appendJSONString(dst, g.BrokerName, false)
	dst = append(dst, `,"cluster":`...)
	dst = appendJSONString(dst, g.Cluster, false)
	return append(dst, '}', '}')
}

// TopicList is the body of the topic-list requests (206, 224, 304, 311-313).
type TopicList struct {
	Topics []string `json:"topicList"`
	// BrokerAddr is set only by GET_SYSTEM_TOPIC_LIST_FROM_NS.
	BrokerAddr string `json:"brokerAddr,omitempty"`
}

// AppendJSON appends the body; topicList is always present, [] if empty.
func (tl *TopicList) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	if tl.BrokerAddr != "" {
		dst = append(dst, `"brokerAddr":`...)
		dst = appendJSONString(dst, tl.BrokerAddr, false)
		dst = append(dst, ',')
	}
	dst = append(dst, `"topicList":`...)
	dst = appendStringList(dst, tl.Topics, false)
	return append(dst, '}')
}

// KVTable is a KV-config namespace: GET_KVLIST_BY_NAMESPACE's body, and
// ORDER_TOPIC_CONFIG in the REGISTER_BROKER response.
type KVTable struct {
	Table map[string]string `json:"table"`
}

// AppendJSON appends {"table":{...}} with sorted keys.
func (kv *KVTable) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"table":`...)
	dst = appendStringMap(dst, kv.Table, false)
	return append(dst, '}')
}

// DataVersion is a broker's topic-config version. Two registrations with
// equal DataVersions carry the same topic config, which is what lets a
// NameServer keep a wiped write permission in force (§5.2). Compare with ==.
type DataVersion struct {
	Counter      int64 `json:"counter"`
	StateVersion int64 `json:"stateVersion"` // 5.x; 0 from 4.x brokers
	Timestamp    int64 `json:"timestamp"`
}

// AppendJSON appends the 5.x form; 4.x brokers ignore stateVersion.
func (v DataVersion) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"counter":`...)
	dst = strconv.AppendInt(dst, v.Counter, 10)
	dst = append(dst, `,"stateVersion":`...)
	dst = strconv.AppendInt(dst, v.StateVersion, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, v.Timestamp, 10)
	return append(dst, '}')
}
