package consul

import (
	"net/http"
	"slices"
	"strings"

	"github.com/namecast/namecast/agent/consul/catalog"
	"github.com/namecast/namecast/routes"
)

// What each query's blocking waits on (routes.Watch): a service's
// records, every record (the service list, which any record may change),
// membership.
func servicesWatch(*http.Request) routes.Watch  { return catalog.WatchNames }
func serviceWatch(r *http.Request) routes.Watch { return catalog.WatchName(r.PathValue("name")) }
func membersWatch(*http.Request) routes.Watch   { return routes.WatchMembers }

// GET /v1/catalog/services: every service and its tags; with ?filter,
// the services of the instances it keeps (Consul evaluates it over each
// instance's catalog entry) and those instances' tags.
func (s *Server) catalogServices(r *http.Request) (any, uint64, error) {
	f, err := parseFilter(r.URL.Query().Get("filter"))
	if err != nil {
		return nil, 0, err
	}
	names, all, idx := s.whole()
	if f == nil {
		return names, idx, nil
	}
	nodes := s.nodes()
	out := map[string][]string{}
	for _, in := range all {
		if !f.match(catalogServiceFields(s.catalogServiceOf(s.nodeNamed(nodes, in.Node), in, idx))) {
			continue
		}
		tags := out[in.Name]
		for _, t := range in.Tags {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
		slices.Sort(tags)
		out[in.Name] = nonNil(tags)
	}
	return out, idx, nil
}

// GET /v1/catalog/datacenters.
func (s *Server) catalogDatacenters(w http.ResponseWriter, r *http.Request) (any, error) {
	return []string{s.cfg.Datacenter}, nil
}

// GET /v1/catalog/nodes: every live agent.
func (s *Server) catalogNodes(r *http.Request) (any, uint64, error) {
	idx := s.table.IndexOf(routes.WatchMembers)
	f, err := parseFilter(r.URL.Query().Get("filter"))
	if err != nil {
		return nil, 0, err
	}
	out := []node{}
	for _, n := range sortedNodes(s.nodes()) {
		if f.match(nodeFields(n)) {
			n.CreateIndex, n.ModifyIndex = idx, idx
			out = append(out, n)
		}
	}
	return out, idx, nil
}

// instances are the instances of the request's service that carry every
// ?tag and whose node has every ?node-meta (k:v), and its index (read
// first).
func (s *Server) instances(r *http.Request) ([]catalog.Instance, uint64, error) {
	name := r.PathValue("name")
	idx := s.table.IndexOf(catalog.WatchName(name))
	q := r.URL.Query()
	tags := q["tag"]
	meta := map[string]string{}
	for _, kv := range q["node-meta"] {
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			return nil, 0, errorf(http.StatusBadRequest, "Invalid node-meta %q: want key:value", kv)
		}
		meta[k] = v
	}
	nodes := s.nodes()
	var out []catalog.Instance
	for _, in := range catalog.Lookup(s.table, name) {
		if hasTags(in.Tags, tags) && hasMeta(s.nodeNamed(nodes, in.Node).Meta, meta) {
			out = append(out, in)
		}
	}
	return out, idx, nil
}

func hasMeta(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func hasTags(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

// GET /v1/catalog/service/{name}?tag=&filter=.
func (s *Server) catalogService(r *http.Request) (any, uint64, error) {
	f, err := parseFilter(r.URL.Query().Get("filter"))
	if err != nil {
		return nil, 0, err
	}
	ins, idx, err := s.instances(r)
	if err != nil {
		return nil, 0, err
	}
	nodes := s.nodes()
	out := []catalogService{}
	for _, in := range ins {
		cs := s.catalogServiceOf(s.nodeNamed(nodes, in.Node), in, idx)
		if f.match(catalogServiceFields(cs)) {
			out = append(out, cs)
		}
	}
	return out, idx, nil
}

// GET /v1/health/service/{name}?passing&tag=&filter=.
func (s *Server) healthService(r *http.Request) (any, uint64, error) {
	q := r.URL.Query()
	f, err := parseFilter(q.Get("filter"))
	if err != nil {
		return nil, 0, err
	}
	passing, err := boolParam(q, "passing")
	if err != nil {
		return nil, 0, err
	}
	ins, idx, err := s.instances(r)
	if err != nil {
		return nil, 0, err
	}
	nodes := s.nodes()
	out := []serviceEntry{}
	for _, in := range ins {
		if passing && in.Status() != catalog.Passing {
			continue
		}
		n := s.nodeNamed(nodes, in.Node)
		n.CreateIndex, n.ModifyIndex = idx, idx
		e := serviceEntry{Node: n, Service: healthService{ID: in.ID, Service: in.Name, Tags: nonNil(in.Tags), Address: in.Address,
			Meta: nonNilMap(in.Meta), Port: in.Port, Weights: defaultWeights, EnableTagOverride: in.EnableTagOverride, CreateIndex: idx, ModifyIndex: idx},
			Checks: checksOf(in, n.Node, idx, nil)}
		if f.match(serviceEntryFields(e)) {
			out = append(out, e)
		}
	}
	return out, idx, nil
}

// boolParam reads a flag parameter as Consul does: present and empty, or
// a boolean.
func boolParam(q map[string][]string, name string) (bool, error) {
	vs, ok := q[name]
	if !ok {
		return false, nil
	}
	switch vs[0] {
	case "", "true", "1", "t", "T", "TRUE", "True":
		return true, nil
	case "false", "0", "f", "F", "FALSE", "False":
		return false, nil
	}
	return false, errorf(http.StatusBadRequest, "Invalid value for ?%s: %q", name, vs[0])
}

// GET /v1/health/checks/{name}: the checks of every instance of a
// service (its service checks; node checks are each node's serfHealth).
func (s *Server) healthChecks(r *http.Request) (any, uint64, error) {
	f, err := parseFilter(r.URL.Query().Get("filter"))
	if err != nil {
		return nil, 0, err
	}
	ins, idx, err := s.instances(r)
	if err != nil {
		return nil, 0, err
	}
	nodes := s.nodes()
	out := []healthCheck{}
	for _, in := range ins {
		for _, c := range checksOf(in, s.nodeNamed(nodes, in.Node).Node, idx, nil)[1:] {
			if f.match(healthCheckFields(c)) {
				out = append(out, c)
			}
		}
	}
	return out, idx, nil
}

// GET /v1/health/state/{state}: every check in a state (any, passing,
// warning, critical), each live node's serfHealth among them.
func (s *Server) healthState(r *http.Request) (any, uint64, error) {
	state := r.PathValue("state")
	switch state {
	case "any", catalog.Passing, catalog.Warning, catalog.Critical:
	default:
		return nil, 0, errorf(http.StatusBadRequest, "Invalid check state: %s", state)
	}
	f, err := parseFilter(r.URL.Query().Get("filter"))
	if err != nil {
		return nil, 0, err
	}
	_, instances, idx := s.whole()
	nodes := s.nodes()
	var all []healthCheck
	for _, n := range sortedNodes(nodes) {
		all = append(all, serfCheck(n.Node, idx))
	}
	for _, in := range instances {
		all = append(all, checksOf(in, s.nodeNamed(nodes, in.Node).Node, idx, nil)[1:]...)
	}
	out := []healthCheck{}
	for _, c := range all {
		if (state == "any" || c.Status == state) && f.match(healthCheckFields(c)) {
			out = append(out, c)
		}
	}
	return out, idx, nil
}

// catalogServiceOf is instance in of node n as /v1/catalog/service lists it.
func (s *Server) catalogServiceOf(n node, in catalog.Instance, idx uint64) catalogService {
	return catalogService{ID: n.ID, Node: n.Node, Address: n.Address, Datacenter: s.cfg.Datacenter, TaggedAddresses: n.TaggedAddresses,
		NodeMeta: n.Meta, ServiceID: in.ID, ServiceName: in.Name, ServiceTags: nonNil(in.Tags), ServiceAddress: in.Address,
		ServiceWeights: defaultWeights, ServiceMeta: nonNilMap(in.Meta), ServicePort: in.Port,
		ServiceEnableTagOverride: in.EnableTagOverride, CreateIndex: idx, ModifyIndex: idx}
}
