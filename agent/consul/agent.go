package consul

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/namecast/namecast/agent/consul/catalog"
	"github.com/namecast/namecast/gossip"
)

// Version is the Consul version the door says it is: clients that gate
// on it find the API of that version (the subset docs/protocols/consul.md
// lists).
const Version = "1.17.0"

// GET /v1/agent/self: the fields clients read (Prometheus reads
// Config.Datacenter; consul/api's NodeName reads Config.NodeName).
func (s *Server) agentSelf(w http.ResponseWriter, r *http.Request) (any, error) {
	self := s.nodes()[s.cfg.Node]
	return map[string]any{
		"Config": map[string]any{"Datacenter": s.cfg.Datacenter, "PrimaryDatacenter": s.cfg.Datacenter, "NodeName": s.cfg.Node,
			"NodeID": self.ID, "Revision": "namecast", "Server": false, "Version": Version},
		"DebugConfig": map[string]any{},
		"Member":      s.member(gossip.Member{Name: s.cfg.Node, Addr: self.Address, Status: gossip.StatusAlive}),
		"Stats":       map[string]any{},
		"Meta":        map[string]string{},
	}, nil
}

// member is a gossip member as serf.Member shows it.
func (s *Server) member(m gossip.Member) map[string]any {
	status := 1 // serf.StatusAlive
	switch m.Status {
	case gossip.StatusLeft:
		status = 3
	case gossip.StatusDead:
		status = 4
	}
	port := 0
	host := hostOf(m.Addr)
	if _, p, ok := cutPort(m.Addr); ok {
		port = p
	}
	return map[string]any{"Name": m.Name, "Addr": host, "Port": port,
		"Tags": map[string]string{"dc": s.cfg.Datacenter, "role": "node", "id": nodeID(m.Name), "segment": "", "build": Version + ":namecast",
			"vsn": "2", "vsn_min": "2", "vsn_max": "3"},
		"Status": status, "ProtocolMin": 1, "ProtocolMax": 5, "ProtocolCur": 2, "DelegateMin": 2, "DelegateMax": 5, "DelegateCur": 4}
}

func cutPort(addr string) (string, int, bool) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			p, err := strconv.Atoi(addr[i+1:])
			return addr[:i], p, err == nil
		}
	}
	return addr, 0, false
}

// GET /v1/agent/members: every member this agent knows, dead and left
// ones too, as Consul's LAN members.
func (s *Server) agentMembers(w http.ResponseWriter, r *http.Request) (any, error) {
	out := []map[string]any{}
	if s.cfg.Agent == nil {
		return append(out, s.member(gossip.Member{Name: s.cfg.Node, Addr: "127.0.0.1:0", Status: gossip.StatusAlive})), nil
	}
	for _, m := range s.cfg.Agent.Members() {
		out = append(out, s.member(m))
	}
	return out, nil
}

// localInstances are the instances whose record this agent holds, by
// service ID: its Consul registrations and every other door's (a broker
// or provider beside this agent is a service of this node).
func (s *Server) localInstances() map[string]catalog.Instance {
	out := map[string]catalog.Instance{}
	_, all, _ := s.whole()
	for _, in := range all {
		if in.Node == s.cfg.Node {
			out[in.ID] = in
		}
	}
	return out
}

// GET /v1/agent/services.
func (s *Server) agentServices(w http.ResponseWriter, r *http.Request) (any, error) {
	f, err := parseFilter(r.URL.Query().Get("filter"))
	if err != nil {
		return nil, err
	}
	out := map[string]agentService{}
	for id, in := range s.localInstances() {
		as := s.agentServiceOf(in)
		if f.match(agentServiceFields(as)) {
			out[id] = as
		}
	}
	return out, nil
}

// GET /v1/agent/service/{id}.
func (s *Server) agentService(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	in, ok := s.localInstances()[id]
	if !ok {
		return nil, errorf(http.StatusNotFound, "unknown service ID: %s", id)
	}
	return s.agentServiceOf(in), nil
}

// GET /v1/agent/checks?filter=: the checks of the services registered
// here, with their latest output.
func (s *Server) agentChecks(w http.ResponseWriter, r *http.Request) (any, error) {
	f, err := parseFilter(r.URL.Query().Get("filter"))
	if err != nil {
		return nil, err
	}
	out := map[string]healthCheck{}
	for _, l := range s.reg.snapshot() {
		in := catalog.Instance{ID: l.reg.ID, Name: l.reg.Name, Tags: l.reg.Tags, Checks: l.reg.Checks}
		for _, c := range checksOf(in, s.cfg.Node, 1, l.outputs)[1:] {
			if f.match(healthCheckFields(c)) {
				out[c.CheckID] = c
			}
		}
	}
	return out, nil
}

// PUT /v1/agent/service/register.
func (s *Server) agentRegister(w http.ResponseWriter, r *http.Request) (any, error) {
	var def serviceDefinition
	if err := decodeBody(r, &def); err != nil {
		return nil, err
	}
	switch {
	case def.Name == "":
		return nil, errorf(http.StatusBadRequest, "Missing service name")
	case def.Kind != "" || len(def.Connect) > 0 && string(def.Connect) != "null" || len(def.Proxy) > 0 && string(def.Proxy) != "null":
		return nil, errorf(http.StatusBadRequest, "Connect is not served by namecast's Consul door: register the service without Kind, Connect or Proxy")
	case def.SocketPath != "":
		return nil, errorf(http.StatusBadRequest, "SocketPath services are not served by namecast's Consul door: register an address and port")
	case def.Namespace != "" && def.Namespace != "default" || def.Partition != "" && def.Partition != "default":
		return nil, errorf(http.StatusBadRequest, "namespaces and partitions are Consul Enterprise's: namecast's Consul door has only the default ones")
	case def.Address == "0.0.0.0" || def.Address == "::" || def.Address == "[::]":
		return nil, errorf(http.StatusBadRequest, "Invalid service address")
	}
	if def.ID == "" {
		def.ID = def.Name
	}
	checks := def.Checks
	if def.Check != nil {
		checks = append([]*checkDefinition{def.Check}, checks...)
	}
	defs := make([]catalog.CheckDef, 0, len(checks))
	for i, c := range checks {
		if c == nil {
			continue
		}
		d, err := c.checkDef()
		if err != nil {
			return nil, err
		}
		if d.ID == "" { // Consul's default check IDs (structs.ServiceDefinition.CheckTypes)
			d.ID = "service:" + def.ID
			if len(checks) > 1 {
				d.ID += ":" + strconv.Itoa(i+1)
			}
		}
		if d.Name == "" {
			d.Name = "Service '" + def.Name + "' check"
		}
		defs = append(defs, d)
	}
	reg := catalog.Registration{ID: def.ID, Name: def.Name, Tags: def.Tags, Address: def.Address, Port: def.Port,
		Meta: def.Meta, EnableTagOverride: def.EnableTagOverride}
	if err := reg.Validate(); err != nil {
		return nil, errorf(http.StatusBadRequest, "%v", err)
	}
	for _, in := range catalog.Lookup(s.table, def.Name) {
		if in.Node == s.cfg.Node && in.ID == def.ID && in.Source != catalog.FromConsul {
			return nil, errorf(http.StatusBadRequest, "service ID %q is a %s registration on this agent: choose another ID", def.ID, in.Source)
		}
	}
	replace, _ := strconv.ParseBool(r.URL.Query().Get("replace-existing-checks"))
	return nil, s.reg.register(reg, defs, replace)
}

// PUT /v1/agent/service/deregister/{id}.
func (s *Server) agentDeregister(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	ok, err := s.reg.deregister(id)
	if err != nil {
		return nil, err
	}
	if !ok {
		if in, other := s.localInstances()[id]; other {
			return nil, errorf(http.StatusBadRequest, "service ID %q is a %s registration: it goes when its own client withdraws it", id, in.Source)
		}
		return nil, errorf(http.StatusNotFound, "Unknown service ID %q. Ensure that the service ID is passed, not the service name.", id)
	}
	return nil, nil
}

// PUT /v1/agent/check/register.
func (s *Server) checkRegister(w http.ResponseWriter, r *http.Request) (any, error) {
	var c checkDefinition
	if err := decodeBody(r, &c); err != nil {
		return nil, err
	}
	if c.Name == "" {
		return nil, errorf(http.StatusBadRequest, "Missing check name")
	}
	d, err := c.checkDef()
	if err != nil {
		return nil, err
	}
	if d.ID == "" {
		d.ID = d.Name // Consul's default
	}
	if d.ServiceID == "" {
		return nil, errorf(http.StatusBadRequest, "a check must name its ServiceID: namecast keeps a check's state in its service's record, and has no node checks")
	}
	return nil, s.reg.addCheck(d)
}

// PUT /v1/agent/check/deregister/{id}.
func (s *Server) checkDeregister(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	ok, err := s.reg.removeCheck(id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errorf(http.StatusNotFound, "Unknown check ID %q. Ensure that the check ID is passed, not the check name.", id)
	}
	return nil, nil
}

// PUT /v1/agent/check/{pass,warn,fail}/{id}?note=.
func (s *Server) checkTTL(status string) handler {
	return func(w http.ResponseWriter, r *http.Request) (any, error) {
		return nil, s.updateTTL(r.PathValue("id"), status, r.URL.Query().Get("note"))
	}
}

// PUT /v1/agent/check/update/{id} {"Status","Output"}.
func (s *Server) checkUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	var u struct{ Status, Output string }
	if err := decodeBody(r, &u); err != nil {
		return nil, err
	}
	if _, err := catalog.ParseStatus(u.Status); err != nil {
		return nil, errorf(http.StatusBadRequest, "Invalid check status: '%s'", u.Status)
	}
	return nil, s.updateTTL(r.PathValue("id"), u.Status, u.Output)
}

// updateTTL sets a TTL check's status, and answers once the record holds
// it. As Consul: an unknown check is 404, one that is not a TTL check
// 500 (vetCheckUpdate, updateTTLCheck).
func (s *Server) updateTTL(id, status, output string) error {
	if err := s.checks.UpdateTTL(id, status, output); err != nil {
		if strings.HasPrefix(err.Error(), "Unknown check ID") {
			return errorf(http.StatusNotFound, "%v", err)
		}
		return errorf(http.StatusInternalServerError, "%v", err)
	}
	s.reg.reportCheck(id) // answered once the record holds the status
	return nil
}

// GET /v1/agent/health/service/name/{name}: this agent's instances of a
// service with their aggregated status; the HTTP status says it too
// (200 passing, 429 warning, 503 critical, 404 none), ?format=text
// answers the status alone.
func (s *Server) agentHealthByName(w http.ResponseWriter, r *http.Request) (any, error) {
	name := r.PathValue("name")
	var found []catalog.Instance
	for _, in := range catalog.Lookup(s.table, name) {
		if in.Node == s.cfg.Node {
			found = append(found, in)
		}
	}
	if len(found) == 0 {
		return s.agentHealthAnswer(w, r, nil, "critical", errorf(http.StatusNotFound, "ServiceName %s Not Found", name))
	}
	worst := catalog.Passing
	infos := make([]agentServiceChecksInfo, 0, len(found))
	for _, in := range found {
		st := in.Status()
		worst = worse(worst, st)
		infos = append(infos, agentServiceChecksInfo{AggregatedStatus: st, Service: s.agentServiceOf(in),
			Checks: checksOf(in, s.cfg.Node, 1, nil)[1:]})
	}
	return s.agentHealthAnswer(w, r, infos, worst, nil)
}

// GET /v1/agent/health/service/id/{id}.
func (s *Server) agentHealthByID(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	in, ok := s.localInstances()[id]
	if !ok {
		return s.agentHealthAnswer(w, r, nil, "critical", errorf(http.StatusNotFound, "ServiceId %s not found", id))
	}
	st := in.Status()
	return s.agentHealthAnswer(w, r, agentServiceChecksInfo{AggregatedStatus: st, Service: s.agentServiceOf(in),
		Checks: checksOf(in, s.cfg.Node, 1, nil)[1:]}, st, nil)
}

func (s *Server) agentHealthAnswer(w http.ResponseWriter, r *http.Request, v any, status string, notFound error) (any, error) {
	code := map[string]int{catalog.Passing: http.StatusOK, catalog.Warning: http.StatusTooManyRequests}[status]
	if code == 0 {
		code = http.StatusServiceUnavailable
	}
	if r.URL.Query().Get("format") == "text" {
		if notFound != nil {
			return nil, notFound
		}
		s.setHeaders(w)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		w.Write([]byte(status))
		return nil, nil
	}
	if notFound != nil {
		return nil, notFound
	}
	if code != http.StatusOK {
		s.setHeaders(w)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
	}
	return v, nil
}

func worse(a, b string) string {
	rank := map[string]int{catalog.Passing: 0, catalog.Warning: 1, catalog.Critical: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// GET /v1/status/leader: every agent answers for itself (there is no
// leader: each serves its replica), so a client that waits for a leader
// finds one.
func (s *Server) statusLeader(w http.ResponseWriter, r *http.Request) (any, error) {
	return s.nodes()[s.cfg.Node].Address + ":8300", nil
}

// GET /v1/status/peers: every live agent.
func (s *Server) statusPeers(w http.ResponseWriter, r *http.Request) (any, error) {
	out := []string{}
	for _, n := range sortedNodes(s.nodes()) {
		out = append(out, n.Address+":8300")
	}
	return out, nil
}
