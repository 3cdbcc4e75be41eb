package nacos

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// Updating an instance: PUT and PATCH /nacos/v1/ns/instance (and PUT
// /nacos/v2/ns/instance), Nacos' InstanceOperatorClientImpl.updateInstance
// and patchInstance. As Nacos keeps an instance's metadata apart from its
// registration (InstanceMetadata: enabled, weight, extra metadata, keyed
// by service and ip:port:cluster) and lays it over the registration when
// it lists (InstanceUtil.updateInstanceMetadata), the door keeps an
// update as a cluster rule (namespace nacos-instance-meta) that every
// agent lays over the instance it lists, however and through whichever
// agent the instance is registered: the update reaches every agent as a
// rule does (the push loop sends it to subscribers), survives the
// client's re-registrations and agent restarts, and disabling an
// instance or giving it weight 0 takes it out of traffic everywhere.
//
//   - PUT replaces the update: enabled and weight as given (true and 1
//     when absent), metadata laid over the registration's. The service
//     must have an instance, else Nacos' 400 "service not found".
//   - PATCH changes what it names (metadata, enabled, weight) of the
//     current update; the instance must be listed, else Nacos' 404.
//   - A deregistration through the HTTP API removes the update. An update
//     of an instance that goes otherwise stays (a rule, within the
//     agent's rules budget) until the instance is deregistered over HTTP
//     or updated again; Nacos forgets it a minute after the instance.
//
// The other doors see the registration, not the update: a Dubbo consumer
// through ZooKeeper is not told the new weight.

const instanceMetaNamespace = "nacos-instance-meta"

var instanceMetaPrefix = routes.KVPrefix(instanceMetaNamespace)

// instanceMeta is one update (Nacos' InstanceMetadata).
type instanceMeta struct {
	Enabled  bool              `json:"enabled"`
	Weight   float64           `json:"weight"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// metaKey is the rule key of an instance's update.
func metaKey(sv service, ip string, port int, cluster string) string {
	return url.PathEscape(sv.ns) + "/" + url.PathEscape(sv.group) + "/" + url.PathEscape(sv.name) + "/" +
		url.PathEscape(ip) + ":" + strconv.Itoa(port) + ":" + url.PathEscape(clusterOf(cluster))
}

// metaService is the service a rule key of an update names.
func metaService(key string) (service, bool) {
	parts := strings.Split(key, "/")
	if len(parts) != 4 {
		return service{}, false
	}
	var p [3]string
	for i := range p {
		var err error
		if p[i], err = url.PathUnescape(parts[i]); err != nil {
			return service{}, false
		}
	}
	sv, err := newService(p[0], p[1], p[2])
	return sv, err == nil
}

// metaOf is an instance's update, if any.
func (s *Server) metaOf(sv service, ip string, port int, cluster string) (instanceMeta, bool) {
	rec, ok := s.table.Rule(routes.KVKey(instanceMetaNamespace, metaKey(sv, ip, port, cluster)))
	if !ok || rec.KV == nil {
		return instanceMeta{}, false
	}
	var m instanceMeta
	if err := json.Unmarshal([]byte(rec.KV.Value), &m); err != nil {
		return instanceMeta{}, false
	}
	return m, true
}

// overlay lays an instance's update over it (called by hosts).
func (s *Server) overlay(sv service, inst nacoswire.Instance) nacoswire.Instance {
	m, ok := s.metaOf(sv, inst.IP, inst.Port, inst.ClusterName)
	if !ok {
		return inst
	}
	inst.Enabled, inst.Weight = m.Enabled, m.Weight
	if len(m.Metadata) > 0 {
		md := maps.Clone(inst.Metadata)
		if md == nil {
			md = map[string]string{}
		}
		maps.Copy(md, m.Metadata)
		inst.Metadata = md
	}
	return inst
}

// serviceExists reports whether sv has an instance, enabled or not.
func (s *Server) serviceExists(sv service) bool {
	return len(s.hosts(sv, "")) > 0
}

func (s *Server) httpUpdate(w http.ResponseWriter, r *http.Request) {
	if err := s.update(r); err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	w.Write([]byte("ok"))
}

// update is updateInstance for a PUT's parameters.
func (s *Server) update(r *http.Request) error {
	sv, err := formService(r)
	if err != nil {
		return err
	}
	in, err := formInstance(r)
	if err != nil {
		return err
	}
	if !s.serviceExists(sv) {
		return invalid(fmt.Errorf("service not found, namespace: %s, service: %s@@%s", sv.ns, sv.group, sv.name))
	}
	return s.putMeta(sv, in.IP, in.Port, in.ClusterName, instanceMeta{Enabled: in.Enabled, Weight: in.Weight, Metadata: in.Metadata})
}

func (s *Server) putMeta(sv service, ip string, port int, cluster string, m instanceMeta) error {
	b, _ := json.Marshal(m)
	if len(b) > MaxMetadata+1024 {
		return invalid(fmt.Errorf("instance update of %d bytes, limit %d", len(b), MaxMetadata+1024))
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	return s.applyRules([]routes.Record{{KV: &routes.KV{Namespace: instanceMetaNamespace,
		Key: metaKey(sv, ip, port, cluster), Value: string(b)}}}, nil)
}

// dropMeta removes an instance's update, if any (a deregistration).
// writeMu held.
func (s *Server) dropMeta(sv service, ip string, port int, cluster string) error {
	if _, ok := s.metaOf(sv, ip, port, cluster); !ok {
		return nil
	}
	return s.applyRules(nil, []string{routes.KVKey(instanceMetaNamespace, metaKey(sv, ip, port, cluster))})
}

// httpPatch is patchInstance: what the request names changes, on the
// listed instance.
func (s *Server) httpPatch(w http.ResponseWriter, r *http.Request) {
	if err := s.patch(r); err != nil {
		code := http.StatusInternalServerError
		if ce, ok := err.(*codedError); ok && ce.code == nacoswire.ErrNotFound {
			code = http.StatusNotFound
		}
		httpError(w, code, err)
		return
	}
	w.Write([]byte("ok"))
}

func (s *Server) patch(r *http.Request) error {
	sv, err := formService(r)
	if err != nil {
		return err
	}
	ip, err := required(r, "ip")
	if err != nil {
		return err
	}
	ps, err := required(r, "port")
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return invalid(fmt.Errorf("port %q is not a number", ps))
	}
	cluster := clusterOf(formCluster(r))
	hosts := s.hosts(sv, "")
	if len(hosts) == 0 {
		return &codedError{nacoswire.ErrNotFound, "no ips found for cluster " + cluster + " in service " + sv.group + "@@" + sv.name}
	}
	var cur *nacoswire.Instance
	for i, h := range hosts {
		if h.IP == ip && h.Port == port && h.ClusterName == cluster {
			cur = &hosts[i]
		}
	}
	if cur == nil {
		return &codedError{nacoswire.ErrNotFound, "no matched ip found!"}
	}
	m, ok := s.metaOf(sv, ip, port, cluster)
	if !ok {
		m = instanceMeta{Enabled: true, Weight: 1}
	}
	if v := r.FormValue("metadata"); strings.TrimSpace(v) != "" {
		if m.Metadata, err = parseMetadata(v); err != nil {
			return err
		}
	}
	if v := r.FormValue("enabled"); strings.TrimSpace(v) != "" {
		m.Enabled = toBool(v, true)
	}
	if v := r.FormValue("weight"); strings.TrimSpace(v) != "" {
		if m.Weight, err = parseWeight(v); err != nil {
			return err
		}
	}
	return s.putMeta(sv, ip, port, cluster, m)
}
