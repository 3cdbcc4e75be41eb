package nacos

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/routes"
)

// How a Nacos instance is a namecast record. Every instance is a URL
// record, so that one registry serves every door:
//
//   - A Dubbo service, named category:interface:version:group as Dubbo's
//     NacosRegistry names it (NacosServiceName), is the Dubbo URL its
//     metadata describes: protocol://ip:port/path?metadata, recorded under
//     (interface, category) exactly like the URL ZooKeeper or HTTP would
//     register. Conversely every Dubbo URL, however registered, is an
//     instance of its category:interface:version:group service.
//   - Any other service (a Spring Cloud application) is
//     nacos://ip:port/service?metadata under (service, "nacos").
//
// What Nacos keeps beside the metadata goes in nacos.* parameters, written
// only when not the default: nacos.namespace (public), nacos.group
// (DEFAULT_GROUP), nacos.cluster (DEFAULT), nacos.weight (1),
// nacos.enabled and nacos.healthy (true), nacos.persistent (false).
// Those keys are reserved (a registration carrying one in its metadata is
// refused); any other nacos.* metadata is the client's own, kept as it
// came: dubbo-go's NacosRegistry writes nacos.category.

const (
	defaultNamespace = "public"
	defaultGroup     = "DEFAULT_GROUP"
	defaultCluster   = "DEFAULT"
	nacosCategory    = "nacos"
	paramPrefix      = "nacos."
	// MaxServiceName bounds a service name (Nacos' own limit is 512 bytes
	// for grouped names).
	MaxServiceName = 512
)

// service names one Nacos service.
type service struct {
	ns, group, name string
	// Dubbo's parts when name is category:interface:version:group.
	dubbo                          bool
	category, iface, version, dgrp string
}

func newService(ns, group, name string) (service, error) {
	if ns == "" {
		ns = defaultNamespace
	}
	if g, n, ok := strings.Cut(name, "@@"); ok { // a grouped name
		group, name = g, n
	}
	if group == "" {
		group = defaultGroup
	}
	sv := service{ns: ns, group: group, name: name}
	for what, v := range map[string]string{"serviceName": name, "groupName": group, "namespace": ns} {
		if v == "" && what == "serviceName" {
			return sv, fmt.Errorf("serviceName is empty")
		}
		if len(v) > MaxServiceName || strings.ContainsAny(v, "/\x00") || strings.Contains(v, "@@") {
			return sv, fmt.Errorf("%s %q is longer than %d bytes or holds '/', NUL or '@@'", what, v, MaxServiceName)
		}
	}
	if parts := strings.Split(name, ":"); len(parts) == 4 && parts[1] != "" && dubboCategory(parts[0]) {
		sv.dubbo, sv.category, sv.iface, sv.version, sv.dgrp = true, parts[0], parts[1], parts[2], parts[3]
	}
	return sv, nil
}

func dubboCategory(c string) bool {
	switch c {
	case dubbo.CategoryProviders, dubbo.CategoryConsumers, dubbo.CategoryRouters, dubbo.CategoryConfigurators:
		return true
	}
	return false
}

// urlKeys are the (interface, category) the service's URLs are under.
func (sv service) urlKeys() (iface, category string) {
	if sv.dubbo {
		return sv.iface, sv.category
	}
	return sv.name, nacosCategory
}

// instanceID is Nacos' default instance id: ip#port#cluster#group@@service.
func instanceID(sv service, ip string, port int, cluster string) string {
	return ip + "#" + strconv.Itoa(port) + "#" + cluster + "#" + sv.group + "@@" + sv.name
}

// validCluster is Nacos' CLUSTER_NAME_PATTERN (NamingUtils.
// checkInstanceIsLegal): letters, digits and '-', or empty (DEFAULT).
func validCluster(c string) bool {
	for _, r := range c {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-') {
			return false
		}
	}
	return true
}

func clusterOf(c string) string {
	if c == "" {
		return defaultCluster
	}
	return c
}

// record turns a registration into its URL record.
func (sv service) record(inst nacoswire.Instance, persistent bool) (routes.Record, error) {
	if !(inst.Weight >= minWeight && inst.Weight <= maxWeight) { // NaN too (forms.go's bounds, every door's)
		return routes.Record{}, fmt.Errorf("instance format invalid: The weights range from %.1f to %.1f (weight %v)", minWeight, maxWeight, inst.Weight)
	}
	if net.ParseIP(inst.IP) == nil && (inst.IP == "" || strings.ContainsAny(inst.IP, "/?#@[]: ")) {
		return routes.Record{}, fmt.Errorf("instance ip %q is not an IP address or host name", inst.IP)
	}
	if inst.Port < 0 || inst.Port > 65535 {
		return routes.Record{}, fmt.Errorf("instance port %d is out of 0..65535", inst.Port)
	}
	if !validCluster(inst.ClusterName) {
		return routes.Record{}, fmt.Errorf("Instance 'clusterName' should be characters with only 0-9a-zA-Z-. (current: %s)", inst.ClusterName)
	}
	if len(inst.Metadata) > dubbo.MaxParams-8 {
		return routes.Record{}, fmt.Errorf("instance has %d metadata entries, more than %d", len(inst.Metadata), dubbo.MaxParams-8)
	}
	if a, ok, err := sv.appInstanceOf(inst, persistent); ok {
		if err != nil {
			return routes.Record{}, err
		}
		for k := range inst.Metadata {
			if reservedParam(k) {
				return routes.Record{}, fmt.Errorf("metadata key %q is reserved: the door keeps the instance's %s in it", k, k[len(paramPrefix):])
			}
		}
		rec := a.record(time.Now().UnixMilli()) // apps.go
		if n := len(rec.Znode.Data); n > MaxAppInstance {
			return routes.Record{}, fmt.Errorf("application instance of %d bytes (its metadata as Curator JSON), limit %d", n, MaxAppInstance)
		}
		return rec, nil
	}
	iface, category := sv.urlKeys()
	protocol, path := "nacos", sv.name
	md := inst.Metadata
	if sv.dubbo {
		protocol, path = inst.Metadata["protocol"], inst.Metadata["path"]
		if protocol == "" {
			protocol = "dubbo"
		}
		if path == "" {
			path = sv.iface
		}
		md = sv.dubboParams(inst.Metadata, path, inst.Enabled)
	}
	u, err := dubbo.Parse(protocol + "://" + net.JoinHostPort(inst.IP, strconv.Itoa(inst.Port)) + "/" + path)
	if err != nil {
		return routes.Record{}, fmt.Errorf("instance does not make a URL: %v", err)
	}
	for k, v := range md {
		if reservedParam(k) {
			return routes.Record{}, fmt.Errorf("metadata key %q is reserved: the door keeps the instance's %s in it", k, k[len(paramPrefix):])
		}
		if !sv.dubbo || (k != "protocol" && k != "path") {
			u = u.WithParam(k, v)
		}
	}
	extra := map[string]string{}
	if sv.ns != defaultNamespace {
		extra["namespace"] = sv.ns
	}
	if sv.group != defaultGroup {
		extra["group"] = sv.group
	}
	if c := clusterOf(inst.ClusterName); c != defaultCluster {
		extra["cluster"] = c
	}
	if inst.Weight != 1 {
		extra["weight"] = strconv.FormatFloat(inst.Weight, 'g', -1, 64)
	}
	if !inst.Enabled {
		extra["enabled"] = "false"
	}
	if !inst.Healthy {
		extra["healthy"] = "false"
	}
	if persistent {
		extra["persistent"] = "true"
	}
	for k, v := range extra {
		u = u.WithParam(paramPrefix+k, v)
	}
	if _, err := dubbo.Parse(u.String()); err != nil {
		return routes.Record{}, fmt.Errorf("instance does not make a URL: %v", err)
	}
	return routes.Record{URL: &routes.URL{Interface: iface, Category: category, URL: u.String()}}, nil
}

// dubboParams are the parameters of a Dubbo service's URL: the
// instance's metadata, with the service key taken from the name it was
// registered under (category:interface:version:group), whatever the
// metadata says, so that the instance is listed and pushed under that
// name through this door and is the same provider of that version and
// group through every other. A disabled instance carries Dubbo's
// enabled=false too, which Dubbo consumers of every door leave out.
func (sv service) dubboParams(md map[string]string, path string, enabled bool) map[string]string {
	out := maps.Clone(md)
	if out == nil {
		out = map[string]string{}
	}
	set := func(k, v string) {
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	set(dubbo.KeyVersion, sv.version)
	set(dubbo.KeyGroup, sv.dgrp)
	if _, had := md[dubbo.KeyCategory]; had || sv.category != dubbo.CategoryProviders {
		out[dubbo.KeyCategory] = sv.category
	}
	if _, had := md[dubbo.KeyInterface]; had || path != sv.iface {
		out[dubbo.KeyInterface] = sv.iface
	}
	if !enabled {
		out[dubbo.KeyEnabled] = "false"
	}
	return out
}

// instance reads a URL back as an instance of sv, or ok false when the URL
// is not one of sv's (another namespace, group, version).
func (sv service) instance(raw string) (inst nacoswire.Instance, ok bool) {
	u, err := dubbo.Parse(raw)
	if err != nil {
		return inst, false
	}
	params := u.Params()
	nacos := map[string]string{}
	for k, v := range params {
		if reservedParam(k) {
			nacos[k[len(paramPrefix):]] = v
			delete(params, k)
		}
	}
	if or(nacos["namespace"], defaultNamespace) != sv.ns || or(nacos["group"], defaultGroup) != sv.group {
		return inst, false
	}
	if sv.dubbo {
		if u.Version() != sv.version || u.Group() != sv.dgrp {
			return inst, false
		}
		params["protocol"], params["path"] = u.Protocol(), u.Path()
	}
	weight := 1.0
	if w, err := strconv.ParseFloat(nacos["weight"], 64); err == nil && w >= minWeight && w <= maxWeight {
		weight = w
	}
	enabled := nacos["enabled"] != "false"
	if sv.dubbo {
		// Dubbo's own flag, whichever door wrote it (dubboParams).
		enabled = enabled && u.Enabled()
		if !enabled && nacos["enabled"] == "false" {
			delete(params, dubbo.KeyEnabled)
		}
	}
	cluster := or(nacos["cluster"], defaultCluster)
	inst = nacoswire.Instance{IP: u.Host(), Port: u.Port(), Weight: weight, Healthy: nacos["healthy"] != "false",
		Enabled: enabled, Ephemeral: nacos["persistent"] != "true" && u.Dynamic(),
		ClusterName: cluster, ServiceName: sv.group + "@@" + sv.name, Metadata: params}
	inst.InstanceID = instanceID(sv, inst.IP, inst.Port, cluster)
	return inst, true
}

// hosts lists sv's instances in the clusters named (all when empty),
// sorted, one per instance id: its URL records' and, for an application,
// its application instances (apps.go).
func (s *Server) hosts(sv service, clusters string) []nacoswire.Instance {
	var want map[string]bool
	if clusters != "" {
		want = map[string]bool{}
		for c := range strings.SplitSeq(clusters, ",") {
			want[strings.TrimSpace(c)] = true
		}
	}
	iface, category := sv.urlKeys()
	seen := map[string]bool{}
	out := []nacoswire.Instance{}
	for _, raw := range s.table.URLs(iface, category) {
		inst, ok := sv.instance(raw)
		if !ok || (want != nil && !want[inst.ClusterName]) || seen[inst.InstanceID] {
			continue
		}
		seen[inst.InstanceID] = true
		out = append(out, s.overlay(sv, inst)) // update.go
	}
	for _, inst := range s.appHosts(sv) {
		if (want == nil || want[inst.ClusterName]) && !seen[inst.InstanceID] {
			seen[inst.InstanceID] = true
			out = append(out, s.overlay(sv, inst))
		}
	}
	slices.SortFunc(out, func(a, b nacoswire.Instance) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	return out
}

// serviceInfo is sv's ServiceInfo as this agent sees it now: its enabled
// instances, as Nacos serves a list, a query, a subscription and a push
// (ServiceUtil.selectInstances with enableOnly in each); a disabled
// instance stays registered and hosts still has it. Its
// lastRefTime is taken before the hosts are read: clients keep the answer
// with the highest lastRefTime, and two answers computed at once (a
// subscribe and a push) must not let the one that read the table earlier
// carry the higher time. Read after taking the time, a higher time always
// holds a view at least as new as every change before it.
func (s *Server) serviceInfo(sv service, clusters string) nacoswire.ServiceInfo {
	ref := s.nextRefTime()
	hosts := slices.DeleteFunc(s.hosts(sv, clusters), func(h nacoswire.Instance) bool { return !h.Enabled })
	b, _ := json.Marshal(hosts)
	sum := md5.Sum(b)
	return nacoswire.ServiceInfo{Name: sv.name, GroupName: sv.group, Clusters: clusters, CacheMillis: 10000,
		Hosts: hosts, LastRefTime: ref, Checksum: hex.EncodeToString(sum[:]), Valid: true}
}

// serviceNames lists the services of one namespace and group: every
// nacos-category URL's service, every Dubbo URL's
// category:interface:version:group, and every application with an
// instance (apps.go).
func (s *Server) serviceNames(ns, group string) []string {
	set := map[string]bool{}
	for _, iface := range s.table.Services() {
		for _, raw := range s.table.URLs(iface, "") {
			u, err := dubbo.Parse(raw)
			if err != nil {
				continue
			}
			p := u.Params()
			if or(p[paramPrefix+"namespace"], defaultNamespace) != ns || or(p[paramPrefix+"group"], defaultGroup) != group {
				continue
			}
			set[serviceNameOf(iface, u)] = true
		}
	}
	for _, app := range s.appNames(ns, group) {
		set[app] = true
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// serviceNameOf is the Nacos service a URL under iface belongs to.
func serviceNameOf(iface string, u dubbo.URL) string {
	if u.Protocol() == "nacos" && u.Path() == iface {
		return iface
	}
	return u.Category() + ":" + iface + ":" + u.Version() + ":" + u.Group()
}

// reservedParam reports whether k is one of the door's nacos.* parameters.
func reservedParam(k string) bool {
	switch k {
	case paramPrefix + "namespace", paramPrefix + "group", paramPrefix + "cluster", paramPrefix + "weight",
		paramPrefix + "enabled", paramPrefix + "healthy", paramPrefix + "persistent":
		return true
	}
	return false
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
