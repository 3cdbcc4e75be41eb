package httpapi

import (
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/namecast/namecast/routes"
)

func (s *Server) getHealth(r *http.Request) (any, error) {
	status := "ok"
	if s.agent.Leaving() {
		status = "leaving"
	}
	// ready: the first sync with the cluster is done, so an empty answer
	// means "none" rather than "not learned yet".
	return map[string]any{"node": s.cfg.Node, "status": status, "members": s.agent.AliveMembers(), "ready": s.host.Ready()}, nil
}

func (s *Server) getMembers(r *http.Request) (any, error) { return s.agent.Members(), nil }

func (s *Server) postJoin(r *http.Request) (any, error) {
	var req struct {
		Addrs []string `json:"addrs"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	if len(req.Addrs) == 0 {
		return nil, errorf(http.StatusBadRequest, "addrs is empty: give at least one gossip address host:port")
	}
	n, err := s.agent.Join(req.Addrs)
	if n == 0 {
		return nil, errorf(http.StatusBadGateway, "could not join any of %v: %v", req.Addrs, err)
	}
	return map[string]int{"joined": n}, nil
}

func (s *Server) postLeave(r *http.Request) (any, error) {
	s.agent.RequestLeave()
	return map[string]bool{"left": true}, nil
}

func (s *Server) putBroker(r *http.Request) (any, error) {
	var reg BrokerRegistration
	if err := decodeBody(r, &reg); err != nil {
		return nil, err
	}
	ttl, err := parseTTL(reg.TTL)
	if err != nil {
		return nil, err
	}
	res, err := s.RegisterBroker(reg, ttl)
	if err != nil {
		return nil, asHTTPError(err)
	}
	ans := brokerAnswer{Cluster: reg.Cluster, BrokerName: reg.BrokerName, BrokerID: reg.BrokerID, Addr: reg.Addr, HAAddr: reg.HAAddr,
		Topics: slices.Sorted(maps.Keys(reg.Topics)), MasterAddr: res.MasterAddr, HAServerAddr: res.HAServerAddr}
	if ans.Topics == nil {
		ans.Topics = []string{}
	}
	if ttl > 0 {
		ans.TTL = ttl.String()
	}
	return ans, nil
}

// brokerAnswer is PUT /v1/brokers' answer: the registration as this agent
// took it and, for a slave whose master is registered, the master's
// addresses (what a NameServer's register result tells a slave).
type brokerAnswer struct {
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

func (s *Server) deleteBroker(r *http.Request) (any, error) {
	id, err := strconv.ParseInt(r.PathValue("brokerId"), 10, 64)
	if err != nil || id < 0 {
		return nil, errorf(http.StatusBadRequest, "brokerId %q must be a non-negative integer", r.PathValue("brokerId"))
	}
	cluster, name := r.PathValue("cluster"), r.PathValue("brokerName")
	ok, err := s.UnregisterBroker(cluster, name, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(http.StatusNotFound, "broker %s/%s/%d is not registered on this agent%s", cluster, name, id, s.heldElsewhere(routes.BrokerKey(name, id)))
	}
	return map[string]bool{"deleted": true}, nil
}

func (s *Server) getTopics(r *http.Request) (any, error) {
	if r.URL.Query().Has("detail") {
		return map[string][]TopicSummary{"topics": s.topicSummaries()}, nil
	}
	return map[string][]string{"topics": nonNil(s.table.Topics())}, nil
}

func (s *Server) getTopic(r *http.Request) (any, error) {
	topic := r.PathValue("topic")
	if err := checkTopic(topic); err != nil {
		return nil, errorf(http.StatusBadRequest, "%v", err)
	}
	route, ok := s.table.TopicRoute(topic)
	if !ok {
		return nil, errorf(http.StatusNotFound, "no route for topic %q: no live broker registers it", topic)
	}
	route.NearestFirst(s.host.RTT)
	return route, nil
}

func (s *Server) getClusters(r *http.Request) (any, error) { return s.table.Clusters(), nil }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
