package consul

import (
	"github.com/namecast/namecast/agent/consul/catalog"
)

// The JSON shapes of Consul's answers (api/agent.go, api/catalog.go,
// api/health.go), the fields namecast has.

type weights struct {
	Passing int
	Warning int
}

var defaultWeights = weights{Passing: 1, Warning: 1}

// agentService is api.AgentService.
type agentService struct {
	ID                string
	Service           string
	Tags              []string
	Meta              map[string]string
	Port              int
	Address           string
	Weights           weights
	EnableTagOverride bool
	Datacenter        string
}

// catalogService is api.CatalogService.
type catalogService struct {
	ID                       string
	Node                     string
	Address                  string
	Datacenter               string
	TaggedAddresses          map[string]string
	NodeMeta                 map[string]string
	ServiceKind              string
	ServiceID                string
	ServiceName              string
	ServiceTags              []string
	ServiceAddress           string
	ServiceWeights           weights
	ServiceMeta              map[string]string
	ServicePort              int
	ServiceEnableTagOverride bool
	CreateIndex              uint64
	ModifyIndex              uint64
}

// healthCheck is api.HealthCheck.
type healthCheck struct {
	Node        string
	CheckID     string
	Name        string
	Status      string
	Notes       string
	Output      string
	ServiceID   string
	ServiceName string
	ServiceTags []string
	Type        string
	Definition  struct{}
	CreateIndex uint64
	ModifyIndex uint64
}

// serviceEntry is api.ServiceEntry (GET /v1/health/service).
type serviceEntry struct {
	Node    node
	Service healthService
	Checks  []healthCheck
}

// healthService is api.AgentService as a ServiceEntry carries it.
type healthService struct {
	ID                string
	Service           string
	Tags              []string
	Address           string
	Meta              map[string]string
	Port              int
	Weights           weights
	EnableTagOverride bool
	CreateIndex       uint64
	ModifyIndex       uint64
}

// agentServiceChecksInfo is api.AgentServiceChecksInfo
// (GET /v1/agent/health/service/...).
type agentServiceChecksInfo struct {
	AggregatedStatus string
	Service          agentService
	Checks           []healthCheck
}

// serfCheck is every node's serfHealth check: its agent is alive (a dead
// agent's records are gone, so every listed node passes it).
func serfCheck(nodeName string, index uint64) healthCheck {
	return healthCheck{Node: nodeName, CheckID: "serfHealth", Name: "Serf Health Status", Status: catalog.Passing,
		Output: "Agent alive and reachable", ServiceTags: []string{}, CreateIndex: index, ModifyIndex: index}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// checksOf are an instance's checks as api.HealthCheck, its node's
// serfHealth first; outputs, when given, are this agent's latest.
func checksOf(in catalog.Instance, nodeName string, index uint64, outputs map[string]string) []healthCheck {
	out := []healthCheck{serfCheck(nodeName, index)}
	for _, c := range in.Checks {
		output := c.Output
		if o, ok := outputs[c.ID]; ok {
			output = o
		}
		out = append(out, healthCheck{Node: nodeName, CheckID: c.ID, Name: c.Name, Status: c.Status, Notes: c.Notes, Output: output,
			ServiceID: in.ID, ServiceName: in.Name, ServiceTags: nonNil(in.Tags), Type: c.Type, CreateIndex: index, ModifyIndex: index})
	}
	return out
}

func (s *Server) agentServiceOf(in catalog.Instance) agentService {
	return agentService{ID: in.ID, Service: in.Name, Tags: nonNil(in.Tags), Meta: nonNilMap(in.Meta), Port: in.Port,
		Address: in.Address, Weights: defaultWeights, EnableTagOverride: in.EnableTagOverride, Datacenter: s.cfg.Datacenter}
}
