package rocketmq

import (
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/routes"
)

// Static topics (5.x). A broker serving static topics sends, in its
// registration's topicQueueMappingInfoMap, each topic's mapping of logical
// to physical queues on it; Java stores them per topic and broker name and
// returns the topic's map in every route (topicQueueMappingByBroker), from
// which 5.x clients build the logical queues. Here each mapping is a
// routes.Mapping record of the registering agent, written (as Java does)
// from the master or the prime slave, on a first registration or a new
// DataVersion, and withdrawn with the group's queue data on that agent.
// Unlike queue data, mappings are not copied to the agents of the group's
// other members (groups.go): when the master's agent withdraws them, a
// slave registered elsewhere keeps the group's queues but not its mappings
// (Java keeps its mapping table until the topic is deleted). Brokers
// without static topics send an empty map and get no records at all.

// mappingRecords is the records of a registration's static-topic mappings.
func (s *Server) mappingRecords(r registration, body *remoting.RegisterBrokerBody) []routes.Record {
	var out []routes.Record
	for topic, info := range body.QueueMappings {
		if !validName(topic) {
			s.log.Warn("ignoring a static-topic mapping whose topic cannot be a route key", "broker", r.name, "topic", topic)
			continue
		}
		m := routes.Mapping{Topic: topic, BrokerName: r.name, Scope: info.Scope, TotalQueues: info.TotalQueues,
			Epoch: info.Epoch, Dirty: info.Dirty, IDs: routes.FormatMappingIDs(info.CurrIDMap), From: r.id}
		// Java lists the mapping under its own bname, which brokers set
		// to their name.
		if info.Bname != r.name {
			m.Bname = info.Bname
		}
		out = append(out, routes.Record{Mapping: &m})
	}
	return out
}

// routeMappings is a topic's topicQueueMappingByBroker for the wire, nil
// when it has none.
func routeMappings(ms map[string]routes.Mapping) map[string]remoting.TopicQueueMappingInfo {
	if len(ms) == 0 {
		return nil
	}
	out := make(map[string]remoting.TopicQueueMappingInfo, len(ms))
	for name, m := range ms {
		ids, _ := m.CurrIDs() // checked when the record was accepted
		out[name] = remoting.TopicQueueMappingInfo{Topic: m.Topic, Scope: m.Scope, TotalQueues: m.TotalQueues,
			Bname: m.Name(), Epoch: m.Epoch, Dirty: m.Dirty, CurrIDMap: ids}
	}
	return out
}
