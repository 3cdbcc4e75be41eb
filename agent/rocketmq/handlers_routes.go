package rocketmq

import (
	"strings"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/routes"
)

// faqSuffix is what Java appends to TOPIC_NOT_EXIST (FAQUrl.suggestTodo).
const faqSuffix = "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."

// getRouteInfo is GET_ROUTEINFO_BY_TOPIC (105), the hot path: clients poll
// it for every topic every 30 s.
func (s *Server) getRouteInfo(_ *conn, req *remoting.Command, rep *reply) {
	topic := req.ExtFields["topic"]
	if topic == "" {
		rep.fail(remoting.SystemError, "the custom field <topic> is null")
		return
	}
	// A cold agent would answer TOPIC_NOT_EXIST for routes it has not
	// learned yet; clients keep their cached route on any other error.
	if !s.reg.Ready() {
		rep.fail(remoting.SystemError, "name server not ready")
		return
	}
	if zone := req.ExtFields["__ZONE_NAME"]; req.ExtFields["__ZONE_MODE"] == "true" && strings.TrimSpace(zone) != "" {
		s.zoneRoute(topic, zone, rep)
		return
	}
	k := routeKey{topic, remoting.RouteFormFor(req)}
	table := s.reg.Table()
	index, now := table.Index(), time.Now()
	e := s.cache.get(k, index, now)
	if e == nil {
		e = s.encodeRoute(k)
		s.cache.put(k, index, now, e)
	}
	if e.body == nil {
		rep.fail(remoting.TopicNotExist, e.remark)
		return
	}
	rep.Body = e.body
}

// route is topic's route, its brokers ordered by the round trip to the
// agent each registered on, nearest first.
func (s *Server) route(topic string) (routes.TopicRoute, bool) {
	route, ok := s.reg.Table().TopicRoute(topic)
	if ok {
		route.NearestFirst(s.reg.RTT)
	}
	return route, ok
}

func notFoundRemark(topic string) string {
	return "No topic route info in name server for the topic: " + topic + faqSuffix
}

func (s *Server) encodeRoute(k routeKey) *cachedRoute {
	route, ok := s.route(k.topic)
	if !ok {
		return &cachedRoute{remark: notFoundRemark(k.topic)}
	}
	td := s.routeData(k.topic, route)
	return &cachedRoute{body: td.AppendJSON(nil, k.form)}
}

// routeData converts a route view to the wire shape, with each group's zone,
// the static-topic mappings and, when enabled, the topic's order config.
func (s *Server) routeData(topic string, route routes.TopicRoute) *remoting.TopicRouteData {
	table := s.reg.Table()
	td := &remoting.TopicRouteData{
		QueueDatas:  make([]remoting.QueueData, len(route.QueueDatas)),
		BrokerDatas: make([]remoting.BrokerData, len(route.BrokerDatas)),
	}
	for i, q := range route.QueueDatas {
		td.QueueDatas[i] = remoting.QueueData{BrokerName: q.BrokerName, ReadQueueNums: q.ReadQueueNums,
			WriteQueueNums: q.WriteQueueNums, Perm: q.Perm, TopicSysFlag: q.TopicSysFlag}
	}
	for i, b := range route.BrokerDatas {
		td.BrokerDatas[i] = remoting.BrokerData{Cluster: b.Cluster, BrokerName: b.BrokerName,
			BrokerAddrs: b.BrokerAddrs, ZoneName: b.ZoneName, EnableActingMaster: b.EnableActingMaster}
	}
	// Java's filterServerTable: each routed broker address's filter servers.
	for _, bd := range route.BrokerDatas {
		for _, b := range table.Brokers(bd.BrokerName) {
			if b.Filters != "" && b.Cluster == bd.Cluster && bd.BrokerAddrs[b.ID] == b.Addr {
				if td.FilterServerTable == nil {
					td.FilterServerTable = map[string][]string{}
				}
				td.FilterServerTable[b.Addr] = strings.Split(b.Filters, ",")
			}
		}
	}

	if s.opts.orderMessageEnable.Load() {
		td.OrderTopicConf = table.KVs(orderTopicConfigNS)[topic]
	}
	td.TopicQueueMappingByBroker = routeMappings(table.Mappings(topic))
	return td
}

// zoneRoute answers a 5.x "nearby" query (§2.3, ZoneRouteRPCHook): only
// groups in the client's zone, plus groups without a master, so that a
// zone whose master is down still reads from slaves elsewhere. Like Java it
// re-encodes in the legacy form whatever the client's version.
func (s *Server) zoneRoute(topic, zone string, rep *reply) {
	route, ok := s.route(topic)
	if !ok {
		rep.fail(remoting.TopicNotExist, notFoundRemark(topic))
		return
	}
	td := s.routeData(topic, route)
	removed := map[string]bool{}
	kept := td.BrokerDatas[:0]
	for _, b := range td.BrokerDatas {
		if _, hasMaster := b.BrokerAddrs[0]; !hasMaster || strings.EqualFold(b.ZoneName, zone) {
			kept = append(kept, b)
		} else {
			removed[b.BrokerName] = true
		}
	}
	td.BrokerDatas = kept
	qs := td.QueueDatas[:0]
	for _, q := range td.QueueDatas {
		if !removed[q.BrokerName] {
			qs = append(qs, q)
		}
	}
	td.QueueDatas = qs
	rep.buf = td.AppendJSON(rep.buf[:0], remoting.LegacyJSON)
	rep.Body = rep.buf
}

// getClusterInfo is GET_BROKER_CLUSTER_INFO (106), always in the legacy
// form, as Java sends it.
func (s *Server) getClusterInfo(_ *conn, _ *remoting.Command, rep *reply) {
	table := s.reg.Table()
	ci := table.Clusters()
	out := remoting.ClusterInfo{BrokerAddrTable: make(map[string]remoting.BrokerData, len(ci.BrokerAddrTable)),
		ClusterAddrTable: ci.ClusterAddrTable}
	for name, b := range ci.BrokerAddrTable {
		out.BrokerAddrTable[name] = remoting.BrokerData{Cluster: b.Cluster, BrokerName: name,
			BrokerAddrs: b.BrokerAddrs, ZoneName: b.ZoneName, EnableActingMaster: b.EnableActingMaster}
	}
	rep.buf = out.AppendJSON(rep.buf[:0])
	rep.Body = rep.buf
}

// getBrokerMemberGroup is GET_BROKER_MEMBER_GROUP (901, 5.x): one group's
// members, as a slave-acting-master broker polls them.
func (s *Server) getBrokerMemberGroup(_ *conn, req *remoting.Command, rep *reply) {
	if !requireExt(req, rep, "clusterName", "brokerName") {
		return
	}
	g := remoting.BrokerMemberGroup{Cluster: req.ExtFields["clusterName"], BrokerName: req.ExtFields["brokerName"],
		BrokerAddrs: map[int64]string{}}
	for _, b := range s.reg.Table().Brokers(g.BrokerName) {
		if b.Cluster == g.Cluster {
			if _, dup := g.BrokerAddrs[b.ID]; !dup {
				g.BrokerAddrs[b.ID] = b.Addr
			}
		}
	}
	rep.buf = g.AppendJSON(rep.buf[:0])
	rep.Body = rep.buf
}
