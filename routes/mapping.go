package routes

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Mapping is a 5.x static topic's logical queues on one broker
// (RocketMQ's TopicQueueMappingInfo): brokers send it in REGISTER_BROKER
// and routes return it as topicQueueMappingByBroker. It is a record of its
// own, keyed like the broker's queue data, so that the brokers and topics
// without static topics, nearly all of them, pay nothing for it (a field
// on Queue cost every queue record 442 bytes of heap on every agent).
// The agent of the master (or 5.x prime slave) that sent it holds it, and
// withdraws it with the group's queue data.
type Mapping struct {
	Topic string `json:"t"`
	// BrokerName is the registering broker's name (the key); Bname is
	// the mapping's own broker name when it differs, which Java keys the
	// route's map by.
	BrokerName  string `json:"n"`
	Bname       string `json:"bn,omitempty"`
	Scope       string `json:"s,omitempty"`
	TotalQueues int    `json:"q,omitempty"`
	Epoch       int64  `json:"e,omitempty"`
	Dirty       bool   `json:"d,omitempty"`
	// IDs is currIdMap, logical queue id to physical, as "l:p,l:p" in
	// ascending logical id (FormatMappingIDs): a string keeps the record
	// comparable and small.
	IDs string `json:"m,omitempty"`
	// From is the broker id that sent it: 0 for the master, else a prime
	// slave's.
	From int64 `json:"b,omitempty"`
}

// MappingKey is the key of one topic's static-topic mapping on one broker.
func MappingKey(brokerName, topic string) string {
	return mappingPrefix + brokerName + "/" + topic
}

// MappingPrefix selects every static-topic mapping of one broker.
func MappingPrefix(brokerName string) string { return mappingPrefix + brokerName + "/" }

// Name is the broker name routes list the mapping under: Bname, else the
// registering broker's.
func (m *Mapping) Name() string {
	if m.Bname != "" {
		return m.Bname
	}
	return m.BrokerName
}

// FormatMappingIDs encodes a currIdMap for Mapping.IDs.
func FormatMappingIDs(ids map[int32]int32) string {
	logical := make([]int32, 0, len(ids))
	for l := range ids {
		logical = append(logical, l)
	}
	slices.Sort(logical)
	var b []byte
	for i, l := range logical {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(l), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(ids[l]), 10)
	}
	return string(b)
}

// CurrIDs decodes IDs back into currIdMap.
func (m *Mapping) CurrIDs() (map[int32]int32, error) {
	out := map[int32]int32{}
	if m.IDs == "" {
		return out, nil
	}
	for pair := range strings.SplitSeq(m.IDs, ",") {
		l, p, ok := strings.Cut(pair, ":")
		li, err1 := strconv.ParseInt(l, 10, 32)
		pi, err2 := strconv.ParseInt(p, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("static-topic mapping ids %q: %q is not logical:physical", m.IDs, pair)
		}
		out[int32(li)] = int32(pi)
	}
	return out, nil
}

func (m *Mapping) valid() bool {
	_, err := m.CurrIDs()
	return err == nil && component(m.Topic) && component(m.BrokerName)
}

// mappingBefore orders two mappings routes would list under one name: the
// master's over a slave's (lower id first), then the higher epoch (Java's
// fence against stale mapping data), then the lower origin name.
func mappingBefore(m *Mapping, origin string, om *Mapping, oorigin string) bool {
	switch {
	case (m.From == 0) != (om.From == 0):
		return m.From == 0
	case m.From != om.From:
		return m.From < om.From
	case m.Epoch != om.Epoch:
		return m.Epoch > om.Epoch
	case origin != oorigin:
		return origin < oorigin
	}
	return m.BrokerName < om.BrokerName
}

// Mappings answers a topic's topicQueueMappingByBroker: one mapping per
// broker name (Mapping.Name), nil when the topic has none, as Java omits it.
func (t *Table) Mappings(topic string) map[string]Mapping {
	t.mu.RLock()
	defer t.mu.RUnlock()
	recs := t.views.mappings[topic]
	if len(recs) == 0 {
		return nil
	}
	best := map[string]*Mapping{}
	for m, origin := range recs {
		if prev, dup := best[m.Name()]; dup && !mappingBefore(m, origin, prev, recs[prev]) {
			continue
		}
		best[m.Name()] = m
	}
	out := make(map[string]Mapping, len(best))
	for name, m := range best {
		out[name] = *m
	}
	return out
}
