package catalog

import (
	"cmp"
	"encoding/json"
	"hash/fnv"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/routes"
)

// Source says which kind of record an instance is read from.
type Source string

const (
	// FromConsul: registered through the Consul door (an application
	// instance znode whose metadata carries consul.id).
	FromConsul Source = "consul"
	// FromBroker: a RocketMQ broker registration (any door).
	FromBroker Source = "rocketmq"
	// FromDubbo: a Dubbo interface-level provider URL (any door).
	FromDubbo Source = "dubbo"
	// FromApp: a Dubbo 3 application-level instance (any door).
	FromApp Source = "dubbo-app"
	// FromNacos: a Nacos instance of a service that is not Dubbo's.
	FromNacos Source = "nacos"
)

// Check statuses, Consul's words (api.HealthPassing...).
const (
	Passing  = "passing"
	Warning  = "warning"
	Critical = "critical"
)

// BrokerService is the service every RocketMQ broker is an instance of.
const BrokerService = "rocketmq-broker"

// DubboTag is the tag every Dubbo provider carries: Dubbo's own Consul
// registry (dubbo-registry-consul, ConsulRegistry.SERVICE_TAG) filters its
// lookups by it, and reads the provider's URL from Meta[DubboURLMeta].
const (
	DubboTag     = "dubbo"
	DubboURLMeta = "url"
)

// Instance is one instance of a Consul service, as every agent reads it.
type Instance struct {
	// Node is the agent whose record this is; "" for a cluster rule (a
	// persistent instance znode, owned by no agent).
	Node    string
	ID      string
	Name    string
	Tags    []string
	Address string
	Port    int
	Meta    map[string]string
	// Checks are the service's own checks as its record holds them; the
	// node's serfHealth check is implied (a dead agent's records are gone).
	Checks            []Check
	EnableTagOverride bool
	Source            Source
	// Key is the record's key.
	Key string
}

// Check is the state of one check, as the record holding its service
// carries it.
type Check struct {
	ID     string `json:"id"`
	Name   string `json:"name,omitempty"`
	Status string `json:"status"`
	Output string `json:"output,omitempty"`
	Notes  string `json:"notes,omitempty"`
	// Type is Consul's CheckType: "ttl", "http", "tcp", or "" for a check
	// that is only ever set through the API.
	Type string `json:"type,omitempty"`
}

// Status is the worst of the instance's checks (critical, warning,
// passing), passing when it has none: what ?passing and DNS filter on.
func (in Instance) Status() string { return Worst(in.Checks) }

// Worst is the worst status of checks, passing for none.
func Worst(checks []Check) string {
	worst := Passing
	for _, c := range checks {
		switch c.Status {
		case Critical:
			return Critical
		case Warning:
			worst = Warning
		case Passing:
		default: // an unknown status is not passing
			return Critical
		}
	}
	return worst
}

// Lookup lists the instances of the service name, sorted by node then ID.
func Lookup(t *routes.Table, name string) []Instance {
	var out []Instance
	if name == BrokerService {
		out = brokers(t.Clusters())
	}
	out = append(out, providers(t, name)...)
	out = append(out, nacosInstances(t, name)...)
	if d, ok := t.App(name); ok {
		for _, in := range d.Instances {
			out = append(out, appInstance(in))
		}
	}
	out = dropCovered(out)
	sortInstances(out)
	return out
}

// dropCovered leaves out the Dubbo provider URL a Consul registration on
// the same node holds beside itself (agent/consul dubbo.go): the
// provider is listed once, as registered.
func dropCovered(in []Instance) []Instance {
	covered := map[string]bool{}
	for _, i := range in {
		if raw := i.Meta[DubboURLMeta]; i.Source == FromConsul && raw != "" {
			if u, err := dubbo.Parse(raw); err == nil {
				covered[i.Node+"\x00"+u.String()] = true
			}
		}
	}
	if len(covered) == 0 {
		return in
	}
	out := in[:0]
	for _, i := range in {
		if i.Source != FromDubbo || !covered[i.Node+"\x00"+i.Meta[DubboURLMeta]] {
			out = append(out, i)
		}
	}
	return out
}

// All lists every instance of every service, sorted by name, node, ID.
func All(t *routes.Table) []Instance {
	var out []Instance
	for _, n := range serviceNames(t) {
		out = append(out, Lookup(t, n)...)
	}
	return out
}

// Names lists every service with at least one instance and the union of
// its instances' tags, sorted (GET /v1/catalog/services).
func Names(t *routes.Table) map[string][]string {
	out := map[string][]string{}
	for _, n := range serviceNames(t) {
		ins := Lookup(t, n)
		if len(ins) == 0 {
			continue
		}
		seen := map[string]bool{}
		tags := []string{}
		for _, in := range ins {
			for _, tag := range in.Tags {
				if !seen[tag] {
					seen[tag] = true
					tags = append(tags, tag)
				}
			}
		}
		slices.Sort(tags)
		out[n] = tags
	}
	return out
}

// serviceNames is every name an instance may be listed under: the broker
// service, every interface, every application. Some may have no instance
// (an interface with consumers only).
func serviceNames(t *routes.Table) []string {
	seen := map[string]bool{}
	if len(t.Clusters().BrokerAddrTable) > 0 {
		seen[BrokerService] = true
	}
	for _, s := range t.Services() {
		seen[s] = true
	}
	for _, a := range t.Apps() {
		if a.Instances > 0 {
			seen[a.Name] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// WatchName is what Lookup(name) depends on, for blocking queries: the
// name's providers and Nacos instances, its application, the brokers,
// and membership.
func WatchName(name string) routes.Watch {
	w := routes.Watch{}
	w = append(w, routes.WatchService(name, dubbo.CategoryProviders)...)
	w = append(w, routes.WatchService(name, nacosCategory)...)
	w = append(w, routes.WatchApp(name)...)
	if name == BrokerService {
		w = append(w, routes.WatchClusters...)
	}
	return append(w, routes.WatchMembers...)
}

// WatchNames is what Names and All depend on; nil is the whole table
// (routes.Watch): every record can add a service or change its tags.
var WatchNames routes.Watch

func sortInstances(s []Instance) {
	slices.SortFunc(s, func(a, b Instance) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Node, b.Node), cmp.Compare(a.ID, b.ID))
	})
}

// brokers are the served registrations of every broker id (the one
// RocketMQ clients are given), one instance each.
func brokers(ci routes.ClusterInfo) []Instance {
	var out []Instance
	for name, bd := range ci.BrokerAddrTable {
		for id, addr := range bd.BrokerAddrs {
			host, port := splitAddr(addr)
			role := "slave"
			if id == 0 {
				role = "master"
			}
			idText := strconv.FormatInt(id, 10)
			in := Instance{Node: bd.Origins[id], ID: BrokerService + ":" + name + ":" + idText, Name: BrokerService,
				Tags:    []string{"cluster=" + bd.Cluster, "broker=" + name, "id=" + idText, role},
				Address: host, Port: port, Source: FromBroker, Key: routes.BrokerKey(name, id),
				Meta: map[string]string{"rocketmq_cluster": bd.Cluster, "rocketmq_broker": name, "rocketmq_broker_id": idText, "rocketmq_role": role}}
			if bd.ZoneName != "" {
				in.Meta["rocketmq_zone"] = bd.ZoneName
			}
			out = append(out, in)
		}
	}
	return out
}

// providers are the Dubbo provider URLs of interface name, one instance
// per URL and agent holding it; disabled providers are left out, as
// Dubbo's consumers leave them out.
func providers(t *routes.Table, name string) []Instance {
	var out []Instance
	for _, raw := range t.URLs(name, dubbo.CategoryProviders) {
		u, err := dubbo.Parse(raw)
		if err != nil || !u.Enabled() {
			continue
		}
		params := u.Params()
		tags := make([]string, 0, len(params)+1)
		for _, k := range slices.Sorted(maps.Keys(params)) {
			tags = append(tags, k+"="+params[k])
		}
		tags = append(tags, DubboTag)
		key := routes.URLKey(name, dubbo.CategoryProviders, raw)
		for _, h := range t.Holders(key) {
			if h.Origin == routes.RulesOrigin {
				h.Origin = ""
			}
			out = append(out, Instance{Node: h.Origin, ID: DubboID(raw), Name: name, Tags: tags, Address: u.Host(), Port: u.Port(),
				Meta: map[string]string{DubboURLMeta: raw, "protocol": u.Protocol()}, Source: FromDubbo, Key: key})
		}
	}
	return out
}

// DubboID is the service ID of a Dubbo provider URL: "dubbo-" and the
// first 16 hex digits of the URL's FNV-1a 64 hash, the same on every agent.
func DubboID(url string) string {
	h := fnv.New64a()
	h.Write([]byte(url))
	return "dubbo-" + strconv.FormatUint(h.Sum64(), 16)
}

// The Nacos door's record of a non-Dubbo instance (agent/nacos
// instances.go): nacos://ip:port/service?metadata under (service,
// "nacos"), Nacos' own fields in nacos.* parameters.
const nacosCategory = "nacos"

func nacosInstances(t *routes.Table, name string) []Instance {
	var out []Instance
	for _, raw := range t.URLs(name, nacosCategory) {
		u, err := dubbo.Parse(raw)
		if err != nil || u.Param("nacos.enabled", "true") == "false" {
			continue
		}
		meta := map[string]string{}
		tags := []string{nacosCategory}
		for k, v := range u.Params() {
			if nk, ok := strings.CutPrefix(k, "nacos."); ok {
				tags = append(tags, nk+"="+v)
				continue
			}
			meta[k] = v
		}
		slices.Sort(tags[1:])
		var checks []Check
		if u.Param("nacos.healthy", "true") == "false" {
			checks = []Check{{ID: "nacos-health", Name: "Nacos health", Status: Critical, Output: "the instance is unhealthy in Nacos (nacos.healthy=false)"}}
		}
		key := routes.URLKey(name, nacosCategory, raw)
		for _, h := range t.Holders(key) {
			node := h.Origin
			if node == routes.RulesOrigin {
				node = "" // a persistent instance: a rule
			}
			out = append(out, Instance{Node: node, ID: u.Host() + "#" + strconv.Itoa(u.Port()) + "#" + name, Name: name, Tags: tags,
				Address: u.Host(), Port: u.Port(), Meta: meta, Checks: checks, Source: FromNacos, Key: key})
		}
	}
	return out
}

// appInstance reads one application instance; one registered through the
// Consul door carries its Consul fields in reserved metadata.
func appInstance(in routes.Instance) Instance {
	out := Instance{Node: in.Agent, ID: in.ID, Name: in.App, Address: in.Address, Port: in.Port, Tags: []string{},
		Meta: map[string]string{}, Source: FromApp, Key: routes.ZnodeKey(routes.InstancePath(in.App, in.ID), "")}
	for k, v := range in.Metadata {
		if !strings.HasPrefix(k, reservedPrefix) {
			out.Meta[k] = v
		}
	}
	if id, ok := in.Metadata[metaID]; ok {
		out.Source, out.ID = FromConsul, id
		_ = json.Unmarshal([]byte(in.Metadata[metaTags]), &out.Tags)
		_ = json.Unmarshal([]byte(in.Metadata[metaChecks]), &out.Checks)
		out.EnableTagOverride = in.Metadata[metaTagOverride] == "true"
		if out.Tags == nil {
			out.Tags = []string{}
		}
	}
	return out
}

func splitAddr(addr string) (string, int) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

// Registered reads a record of node as a Consul door's registration;
// false for any other record.
func Registered(node string, rec routes.Record) (Instance, bool) {
	z := rec.Znode
	if z == nil {
		return Instance{}, false
	}
	rest, ok := strings.CutPrefix(z.Path, routes.AppsRoot+"/")
	app, id, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		return Instance{}, false
	}
	in := appInstance(routes.ParseInstance(app, id, z.Data, node))
	return in, in.Source == FromConsul
}
