package rocketmq

import (
	"maps"
	"slices"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/routes"
)

func (rep *reply) topicList(tl remoting.TopicList) {
	if tl.Topics == nil {
		tl.Topics = []string{}
	}
	rep.buf = tl.AppendJSON(rep.buf[:0])
	rep.Body = rep.buf
}

// getAllTopicList is GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206).
func (s *Server) getAllTopicList(_ *conn, _ *remoting.Command, rep *reply) {
	rep.topicList(remoting.TopicList{Topics: s.reg.Table().Topics()})
}

// getTopicsByCluster is GET_TOPICS_BY_CLUSTER (224): topics with queue data
// on any broker of the cluster; an unknown cluster has none.
func (s *Server) getTopicsByCluster(_ *conn, req *remoting.Command, rep *reply) {
	table := s.reg.Table()
	seen := map[string]bool{}
	var topics []string
	for _, name := range table.Clusters().ClusterAddrTable[req.ExtFields["cluster"]] {
		for _, q := range table.Queues(name) {
			if !seen[q.Topic] {
				seen[q.Topic] = true
				topics = append(topics, q.Topic)
			}
		}
	}
	slices.Sort(topics)
	rep.topicList(remoting.TopicList{Topics: topics})
}

// getSystemTopicList is GET_SYSTEM_TOPIC_LIST_FROM_NS (304): every cluster
// and broker name (brokers create topics so named) and one broker address.
func (s *Server) getSystemTopicList(_ *conn, _ *remoting.Command, rep *reply) {
	ci := s.reg.Table().Clusters()
	var tl remoting.TopicList
	for cluster, names := range ci.ClusterAddrTable {
		tl.Topics = append(tl.Topics, cluster)
		tl.Topics = append(tl.Topics, names...)
	}
	slices.Sort(tl.Topics)
	tl.Topics = slices.Compact(tl.Topics)
	for _, name := range tl.Topics {
		if b, ok := ci.BrokerAddrTable[name]; ok {
			for _, id := range slices.Sorted(maps.Keys(b.BrokerAddrs)) {
				tl.BrokerAddr = b.BrokerAddrs[id]
				break
			}
			break
		}
	}
	rep.topicList(tl)
}

// getUnitTopicList answers 311, 312 and 313: topics whose (first) queue
// data has the UNIT flag, the UNIT_SUB flag, or UNIT_SUB without UNIT.
func (s *Server) getUnitTopicList(_ *conn, req *remoting.Command, rep *reply) {
	want := func(flag int) bool {
		switch req.Code {
		case remoting.GetUnitTopicList:
			return flag&remoting.TopicSysFlagUnit != 0
		case remoting.GetHasUnitSubTopicList:
			return flag&remoting.TopicSysFlagUnitSub != 0
		default:
			return flag&remoting.TopicSysFlagUnitSub != 0 && flag&remoting.TopicSysFlagUnit == 0
		}
	}
	table := s.reg.Table()
	var topics []string
	for _, topic := range table.Topics() {
		if route, ok := table.TopicRoute(topic); ok && want(route.QueueDatas[0].TopicSysFlag) {
			topics = append(topics, topic)
		}
	}
	rep.topicList(remoting.TopicList{Topics: topics})
}

// deleteTopic is DELETE_TOPIC_IN_NAMESRV (216): drop the topic's queue data,
// only on the cluster's brokers when clusterName is given. Queue data held
// by other agents is deleted by a command to them. Always SUCCESS.
func (s *Server) deleteTopic(_ *conn, req *remoting.Command, rep *reply) {
	if !requireExt(req, rep, "topic") {
		return
	}
	topic, cluster := req.ExtFields["topic"], req.ExtFields["clusterName"]
	s.deleteTopicLocal(topic, cluster)
	if route, ok := s.reg.Table().TopicRoute(topic); ok {
		s.sendCommandsFor(route.BrokerDatas, opDeleteTopic, topic, cluster)
	}
}

func (s *Server) deleteTopicLocal(topic, cluster string) int {
	inCluster := func(string) bool { return true }
	if cluster != "" {
		names := s.reg.Table().Clusters().ClusterAddrTable[cluster]
		inCluster = func(name string) bool { return slices.Contains(names, name) }
	}
	bt := &s.brokers
	bt.mu.Lock()
	defer bt.mu.Unlock()
	var deletes []string
	now := s.now()
	for _, r := range s.reg.LocalRecords(routes.EveryQueue) {
		if q := r.Queue; q != nil && q.Topic == topic && inCluster(q.BrokerName) {
			deletes = append(deletes, r.Key())
			s.deletedTopics[q.BrokerName+"/"+topic] = deletedTopicOf(q, now)
		}
	}
	s.reg.Apply(nil, deletes)
	return len(deletes)
}

// registerTopic is REGISTER_TOPIC_IN_NAMESRV (217, 5.x): a broker's queue
// data for one topic. Like Java it is ignored (still SUCCESS) unless every
// broker named is registered; here that means registered on this agent,
// which owns the queue data it writes.
func (s *Server) registerTopic(_ *conn, req *remoting.Command, rep *reply) {
	if !requireExt(req, rep, "topic") {
		return
	}
	topic := req.ExtFields["topic"]
	var td remoting.TopicRouteData
	if err := remoting.Unmarshal(req.Body, &td); err != nil {
		rep.fail(remoting.SystemError, "cannot decode the topic route body: "+err.Error())
		return
	}
	if len(td.QueueDatas) == 0 || !validName(topic) {
		return
	}
	bt := &s.brokers
	bt.mu.Lock()
	defer bt.mu.Unlock()
	puts := make([]routes.Record, 0, len(td.QueueDatas))
	for _, q := range td.QueueDatas {
		if !s.registeredHere(q.BrokerName) {
			s.log.Warn("ignoring topic registration for a broker not registered on this agent", "topic", topic, "broker", q.BrokerName)
			return
		}
		rec := routes.Queue{Topic: topic, BrokerName: q.BrokerName,
			ReadQueueNums: q.ReadQueueNums, WriteQueueNums: q.WriteQueueNums, Perm: q.Perm, TopicSysFlag: q.TopicSysFlag}
		if lb := s.providerHere(q.BrokerName); lb != nil {
			rec.From, rec.StateVersion, rec.Counter = lb.id, lb.version.StateVersion, lb.version.Counter
		}
		puts = append(puts, routes.Record{Queue: &rec})
	}
	if _, err := s.reg.Apply(puts, nil); err != nil {
		rep.fail(remoting.SystemError, "topic refused: "+err.Error()) // past the record budget: nothing applied
		return
	}
	for _, q := range td.QueueDatas {
		delete(s.deletedTopics, q.BrokerName+"/"+topic)
	}
}

// providerHere is the live member of the group registered here whose
// topic config counts: the master, else the lowest id. bt.mu must be held.
func (s *Server) providerHere(name string) *liveBroker {
	var best *liveBroker
	for _, lb := range s.brokers.live {
		if lb.name == name && (best == nil || lb.id == 0 || best.id != 0 && lb.id < best.id) {
			best = lb
		}
	}
	return best
}

// registeredHere reports whether this agent holds a broker record of the
// group. bt.mu must be held.
func (s *Server) registeredHere(name string) bool {
	for _, lb := range s.brokers.live {
		if lb.name == name {
			return true
		}
	}
	for _, r := range s.reg.LocalRecords(routes.EveryBroker) {
		if r.Broker != nil && r.Broker.Name == name {
			return true
		}
	}
	return false
}
