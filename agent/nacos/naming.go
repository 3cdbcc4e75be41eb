package nacos

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// MaxBatch bounds the instances of one BatchInstanceRequest.
const MaxBatch = 1000

func (s *Server) instanceRequest(c *client, body []byte) (any, error) {
	var req nacoswire.InstanceRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	sv, err := newService(req.Namespace, req.GroupName, req.ServiceName)
	if err != nil {
		return nil, invalid(err)
	}
	persistent := !req.Instance.Ephemeral
	switch req.Type {
	case nacoswire.RegisterInstance:
		err = s.register(c, sv, []nacoswire.Instance{req.Instance}, persistent, false)
	case nacoswire.DeregisterInstance:
		err = s.deregister(c, sv, req.Instance, persistent)
	default:
		err = invalid(fmt.Errorf("type %q is neither %s nor %s", req.Type, nacoswire.RegisterInstance, nacoswire.DeregisterInstance))
	}
	if err != nil {
		return nil, err
	}
	return &nacoswire.InstanceResponse{Response: nacoswire.OK(), Type: req.Type}, nil
}

// persistentInstanceRequest is 2.3's request for non-ephemeral instances.
func (s *Server) persistentInstanceRequest(c *client, body []byte) (any, error) {
	var req nacoswire.InstanceRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	req.Instance.Ephemeral = false
	b, _ := jsonMarshal(req)
	return s.instanceRequest(c, b)
}

// batchInstanceRequest replaces the connection's instances of one service
// with the batch, as Nacos' batchRegisterInstance does.
func (s *Server) batchInstanceRequest(c *client, body []byte) (any, error) {
	var req nacoswire.BatchInstanceRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	if len(req.Instances) > MaxBatch {
		return nil, invalid(fmt.Errorf("%d instances in one batch, limit %d", len(req.Instances), MaxBatch))
	}
	sv, err := newService(req.Namespace, req.GroupName, req.ServiceName)
	if err != nil {
		return nil, invalid(err)
	}
	if req.Type != nacoswire.BatchRegisterInstance {
		return nil, invalid(fmt.Errorf("type %q is not %s", req.Type, nacoswire.BatchRegisterInstance))
	}
	for _, in := range req.Instances {
		if !in.Ephemeral {
			return nil, invalid(fmt.Errorf("batch registration is for ephemeral instances only (%s:%d is not)", in.IP, in.Port))
		}
	}
	if err := s.register(c, sv, req.Instances, false, true); err != nil {
		return nil, err
	}
	return &nacoswire.InstanceResponse{Response: nacoswire.OK(), Type: req.Type}, nil
}

// identity is an instance's identity within its service (Nacos: ip, port, cluster).
func identity(sv service, ip string, port int, cluster string) string {
	return sv.ns + "\x00" + sv.group + "\x00" + sv.name + "\x00" + ip + "\x00" + strconv.Itoa(port) + "\x00" + clusterOf(cluster)
}

// register records instances of sv: ephemeral ones held by c on this agent,
// persistent ones as cluster rules. An instance replaces the previous
// registration of the same identity; replaceAll also drops c's other
// instances of sv (a batch is the whole set).
func (s *Server) register(c *client, sv service, insts []nacoswire.Instance, persistent, replaceAll bool) error {
	recs := make([]routes.Record, len(insts))
	for i, in := range insts {
		rec, err := sv.record(in, persistent)
		if err != nil {
			return invalid(err)
		}
		recs[i] = rec
	}
	return saved(s.registerLocked(c, sv, insts, recs, persistent, replaceAll))
}

// registerLocked is register's change, under writeMu; register waits for
// its lease's write after letting go of it.
func (s *Server) registerLocked(c *client, sv service, insts []nacoswire.Instance, recs []routes.Record, persistent, replaceAll bool) (lease.Saving, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.checkKind(sv, persistent, replaceAll); err != nil {
		return lease.Saving{}, err
	}
	for i := range recs {
		recs[i] = s.settle(sv, insts[i], persistent, recs[i]) // apps.go
	}
	if persistent {
		var dels []string
		for _, in := range insts {
			dels = append(dels, s.persistentKeys(sv, in)...)
		}
		return lease.Saving{}, s.applyRules(recs, without(dels, recs))
	}
	s.mu.Lock()
	if c.gone {
		s.mu.Unlock()
		return lease.Saving{}, &codedError{nacoswire.ErrUnregistered, "connection closed"}
	}
	// What c's instances become: each identity's record, the previous
	// registration of the same identity replaced.
	insts2 := maps.Clone(c.insts)
	want := map[string]bool{}
	for _, in := range insts {
		want[identity(sv, in.IP, in.Port, in.ClusterName)] = true
	}
	if replaceAll {
		prefix := sv.ns + "\x00" + sv.group + "\x00" + sv.name + "\x00"
		for id := range insts2 {
			if strings.HasPrefix(id, prefix) && !want[id] {
				delete(insts2, id)
			}
		}
	}
	for i, in := range insts {
		insts2[identity(sv, in.IP, in.Port, in.ClusterName)] = recs[i].Key()
	}
	s.mu.Unlock()
	return s.setInstances(c, insts2, recs)
}

// checkKind refuses a registration of the other kind than the service's
// instances (ephemeral or persistent) with Nacos' error
// (Ephemeral/PersistentClientOperationServiceImpl): a service's
// instances are all of one kind. writeMu held, so the check and the
// registration it guards are one step on this agent. A service with no
// instance left takes either kind (Nacos keeps an empty service's kind
// until it cleans the service up, 60 s by default).
func (s *Server) checkKind(sv service, persistent, batch bool) error {
	// The other kind: ephemeral instances when registering a persistent one.
	if !s.hasKind(sv, persistent) {
		return nil
	}
	name := sv.group + "@@" + sv.name
	switch {
	case persistent:
		return kindError("Current service " + name + " is ephemeral service, can't register persistent instance.")
	case batch:
		return kindError("Current service " + name + " is persistent service, can't batch register ephemeral instance.")
	default:
		return kindError("Current service " + name + " is persistent service, can't register ephemeral instance.")
	}
}

// hasKind reports whether sv has an instance of the kind, without reading
// every instance back: a persistent instance is a cluster rule (the
// door's, or a dynamic=false URL another door registered), so the common
// case, an ephemeral registration into an ephemeral service, reads the
// rules under the service's prefix and no URL.
func (s *Server) hasKind(sv service, ephemeral bool) bool {
	iface, category := sv.urlKeys()
	if !ephemeral {
		for _, h := range s.table.RulesWithPrefix(routes.URLPrefix(iface, category)) {
			if h.Rec.URL == nil {
				continue
			}
			if in, ok := sv.instance(h.Rec.URL.URL); ok && !in.Ephemeral {
				return true
			}
		}
		return false
	}
	for _, raw := range s.table.URLs(iface, category) {
		if in, ok := sv.instance(raw); ok && in.Ephemeral {
			return true
		}
	}
	return len(s.appHosts(sv)) > 0
}

// kindError is Nacos' NacosRuntimeException(INVALID_PARAM, msg) as its
// clients read it.
func kindError(msg string) error {
	return &codedError{nacoswire.ErrInvalidParam, fmt.Sprintf("errCode: %d, errMsg: %s ", nacoswire.ErrInvalidParam, msg)}
}

// setInstances makes insts (identity -> record key) what c holds: recs
// are the records of its new keys. writeMu held; the caller waits for the
// Saving after letting go of it.
func (s *Server) setInstances(c *client, insts map[string]string, recs []routes.Record) (lease.Saving, error) {
	keep := map[string]bool{}
	for _, k := range insts {
		keep[k] = true
	}
	s.mu.Lock()
	var drops []string
	for _, k := range c.insts {
		if !keep[k] {
			drops = append(drops, k)
		}
	}
	s.mu.Unlock()
	sv, err := s.hold(grpcHolder(c.id), recs, drops, time.Time{}, holdState{Kind: kindGRPC, Remote: c.remote})
	if err != nil {
		return sv, err
	}
	s.mu.Lock()
	c.insts = insts
	s.mu.Unlock()
	return sv, nil
}

// without drops from dels the keys puts brings back.
func without(dels []string, puts []routes.Record) []string {
	out := dels[:0]
	for _, d := range dels {
		back := false
		for _, p := range puts {
			back = back || p.Key() == d
		}
		if !back {
			out = append(out, d)
		}
	}
	return out
}

// persistentKeys are the rule keys of sv's persistent instances with in's
// identity.
func (s *Server) persistentKeys(sv service, in nacoswire.Instance) []string {
	iface, category := sv.urlKeys()
	var keys []string
	for _, h := range s.table.RulesWithPrefix(routes.URLPrefix(iface, category)) {
		if h.Rec.URL == nil {
			continue
		}
		got, ok := sv.instance(h.Rec.URL.URL)
		if ok && got.IP == in.IP && got.Port == in.Port && got.ClusterName == clusterOf(in.ClusterName) {
			keys = append(keys, h.Rec.Key())
		}
	}
	return keys
}

func (s *Server) deregister(c *client, sv service, in nacoswire.Instance, persistent bool) error {
	return saved(s.deregisterLocked(c, sv, in, persistent))
}

func (s *Server) deregisterLocked(c *client, sv service, in nacoswire.Instance, persistent bool) (lease.Saving, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if persistent {
		if keys := s.persistentKeys(sv, in); len(keys) > 0 {
			return lease.Saving{}, s.applyRules(nil, keys)
		}
		return lease.Saving{}, nil
	}
	id := identity(sv, in.IP, in.Port, in.ClusterName)
	s.mu.Lock()
	_, had := c.insts[id]
	insts := maps.Clone(c.insts)
	delete(insts, id)
	s.mu.Unlock()
	if !had {
		return lease.Saving{}, nil
	}
	return s.setInstances(c, insts, nil)
}

func (s *Server) serviceQuery(c *client, body []byte) (any, error) {
	var req nacoswire.ServiceQueryRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	sv, err := newService(req.Namespace, req.GroupName, req.ServiceName)
	if err != nil {
		return nil, invalid(err)
	}
	info := s.serviceInfo(sv, req.Cluster)
	if req.HealthyOnly {
		kept := info.Hosts[:0]
		for _, h := range info.Hosts {
			if h.Healthy && h.Enabled {
				kept = append(kept, h)
			}
		}
		info.Hosts = kept
	}
	return &nacoswire.ServiceInfoResponse{Response: nacoswire.OK(), ServiceInfo: info}, nil
}

// MaxPageSize bounds ServiceListRequest.pageSize.
const MaxPageSize = 10000

func (s *Server) serviceList(c *client, body []byte) (any, error) {
	var req nacoswire.ServiceListRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	names, err := s.servicePage(req.Namespace, req.GroupName, req.PageNo, req.PageSize)
	if err != nil {
		return nil, err
	}
	return &nacoswire.ServiceListResponse{Response: nacoswire.OK(), Count: names.count, ServiceNames: names.page}, nil
}

type page struct {
	count int
	page  []string
}

func (s *Server) servicePage(ns, group string, pageNo, pageSize int) (page, error) {
	if pageNo <= 0 {
		pageNo = 1
	}
	if pageSize <= 0 || pageSize > MaxPageSize {
		return page{}, invalid(fmt.Errorf("pageSize %d is out of 1..%d", pageSize, MaxPageSize))
	}
	sv, err := newService(ns, group, "x")
	if err != nil {
		return page{}, invalid(err)
	}
	all := s.serviceNames(sv.ns, sv.group)
	start := min((pageNo-1)*pageSize, len(all))
	end := min(start+pageSize, len(all))
	return page{count: len(all), page: append([]string{}, all[start:end]...)}, nil
}
