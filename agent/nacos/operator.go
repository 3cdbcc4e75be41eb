package nacos

import (
	"net/http"
	"strings"
)

// /nacos/v1/ns/operator/metrics (Nacos' OperatorController.metrics): the
// SDKs ask it for the server's status and report the server DOWN when it
// fails. status is UP once the agent has finished its first sync with
// the cluster, STARTING before. With onlyStatus=false the figures are
// this agent's: every agent serves the whole table, so the service and
// instance counts are the cluster's; the client counts are the clients
// of this agent's door, each of which is its responsibility. cpu, load
// and mem are not measured (0).

type operatorMetrics struct {
	Status                      string  `json:"status"`
	ServiceCount                *int    `json:"serviceCount,omitempty"`
	InstanceCount               int     `json:"instanceCount,omitempty"`
	SubscribeCount              int     `json:"subscribeCount,omitempty"`
	ResponsibleInstanceCount    int     `json:"responsibleInstanceCount,omitempty"`
	ClientCount                 int     `json:"clientCount,omitempty"`
	ConnectionBasedClientCount  int     `json:"connectionBasedClientCount,omitempty"`
	EphemeralIPPortClientCount  int     `json:"ephemeralIpPortClientCount,omitempty"`
	PersistentIPPortClientCount int     `json:"persistentIpPortClientCount,omitempty"`
	ResponsibleClientCount      int     `json:"responsibleClientCount,omitempty"`
	CPU                         float64 `json:"cpu,omitempty"`
	Load                        float64 `json:"load,omitempty"`
	Mem                         float64 `json:"mem,omitempty"`
}

func (s *Server) operatorMetrics(onlyStatus bool) operatorMetrics {
	m := operatorMetrics{Status: "UP"}
	if !s.reg.Ready() {
		m.Status = "STARTING"
	}
	if onlyStatus {
		return m
	}
	services := s.table.Services()
	n := len(services)
	m.ServiceCount = &n
	for _, iface := range services {
		m.InstanceCount += len(s.table.URLs(iface, ""))
	}
	g := s.Gauges()
	m.SubscribeCount = g.Subscribers
	m.ResponsibleInstanceCount = g.Instances
	m.ConnectionBasedClientCount = g.Connections + g.Closing
	m.EphemeralIPPortClientCount = g.HTTPInstances
	m.ClientCount = m.ConnectionBasedClientCount + m.EphemeralIPPortClientCount
	m.ResponsibleClientCount = m.ClientCount
	return m
}

func (s *Server) httpOperatorMetrics(w http.ResponseWriter, r *http.Request) {
	// Boolean.parseBoolean: anything but "true" (any case) is false.
	writeJSON(w, s.operatorMetrics(strings.EqualFold(or(r.FormValue("onlyStatus"), "true"), "true")))
}
