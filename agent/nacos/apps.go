package nacos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// Dubbo 3's application-level discovery over Nacos is the same
// application, instance, mapping and metadata records the ZooKeeper door
// and HTTP write (routes/apps.go, docs/protocols/dubbo-apps.md), so an
// application registered through one door is called through any other.
// What Dubbo writes to Nacos (dubbo-go 3.3 registry/nacos/
// service_discovery.go and metadata/report/nacos/report.go; Java Dubbo's
// NacosServiceDiscovery and NacosMetadataReport), and what it is here:
//
//   - An instance: Nacos service {app} in the public namespace and
//     DEFAULT_GROUP, ephemeral, its metadata holding dubbo.metadata.revision
//     (and "id", dubbo-go's instance id, empty for its own) is the znode
//     /services/{app}/{id} holding Curator's ServiceInstance JSON, id being
//     the "id" metadata or else ip:port as Dubbo names instances on
//     ZooKeeper; it is held like any ephemeral instance of the door, with
//     the ephemeralOwner the ZooKeeper door shows for records without a
//     session. Cluster, weight and enabled, when not the defaults, are
//     nacos.* keys of the payload's metadata. Conversely every instance of
//     an application, however registered, is an instance of the Nacos
//     service {app} (its id in the "id" metadata when not ip:port).
//   - The mapping: config dataId {interface}, group "mapping", content the
//     comma-separated applications, is /dubbo/mapping/{interface}: a
//     publish writes this agent's part of the set (as the ZooKeeper door
//     does), a query reads the union of every part, sorted.
//   - The metadata (metadata-type remote): config dataId {app}, group
//     {revision}, content that revision's MetadataInfo JSON, is
//     /dubbo/metadata/{app}/{revision} (Java's path) and /dubbo/{app}/{revision}
//     (dubbo-go's ZooKeeper report's), cluster rules; a query finds either.
//     Content that is not the MetadataInfo of app and revision stays a
//     plain config.
//
// Other groups and namespaces, and persistent instances, stay Nacos
// instances (nacos:// URL records): Dubbo's application root has neither.

// mappingGroup is the config group of Dubbo's service-name mapping
// (dubbo-go metadata/mapping/metadata DefaultGroup, Java
// ServiceNameMapping.DEFAULT_MAPPING_GROUP).
const mappingGroup = "mapping"

// MaxAppInstance bounds an application instance's Curator JSON: every
// agent keeps it, as a URL record is bounded to dubbo.MaxLength. Dubbo's
// own instances are well under 2 KiB.
const MaxAppInstance = 16 << 10

// idKey is the metadata dubbo-go's Nacos service discovery keeps its
// instance id in.
const idKey = "id"

// appLevel reports whether sv can be a Dubbo application: the namespace
// and group Dubbo's application-level discovery registers in by default.
func (sv service) appLevel() bool {
	return !sv.dubbo && sv.ns == defaultNamespace && sv.group == defaultGroup
}

// appInstance is a Nacos instance as an application instance.
type appInstance struct {
	app, id, ip string
	port        int
	md          map[string]string
}

// appInstanceOf reads a registration as an application instance; ok false
// when it is not one (then it is a nacos:// URL record).
func (sv service) appInstanceOf(inst nacoswire.Instance, persistent bool) (a appInstance, ok bool, err error) {
	if persistent || !sv.appLevel() || inst.Metadata[routes.MetadataRevisionKey] == "" {
		return a, false, nil
	}
	a = appInstance{app: sv.name, id: inst.Metadata[idKey], ip: inst.IP, port: inst.Port, md: maps.Clone(inst.Metadata)}
	delete(a.md, idKey)
	if a.id == "" {
		a.id = inst.IP + ":" + strconv.Itoa(inst.Port)
	}
	if len(a.id) > 255 || a.id == "." || a.id == ".." || strings.ContainsAny(a.id, "/\x00") || hasControl(a.id) {
		return a, true, fmt.Errorf("metadata id %q cannot name an application instance: 1-255 characters, no '/' or control characters", a.id)
	}
	if c := clusterOf(inst.ClusterName); c != defaultCluster {
		a.md[paramPrefix+"cluster"] = c
	}
	if inst.Weight != 1 && inst.Weight > 0 {
		a.md[paramPrefix+"weight"] = strconv.FormatFloat(inst.Weight, 'g', -1, 64)
	}
	if !inst.Enabled {
		a.md[paramPrefix+"enabled"] = "false"
	}
	return a, true, nil
}

func hasControl(s string) bool {
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// record is the instance's znode record as first registered; settle
// fits it to the record this agent already has.
func (a appInstance) record(now int64) routes.Record {
	return routes.Record{Znode: &routes.Znode{Path: routes.InstancePath(a.app, a.id),
		Data: routes.CuratorInstanceJSON(a.app, a.id, a.ip, a.port, a.md, now), Ctime: now, Mtime: now}}
}

// settle fits rec, the record of inst, to this agent's current record of
// its key: an application instance keeps its registration time, version
// and stamp when its data is the same (so holding it again changes
// nothing), and is otherwise the next version with a new stamp, owned as
// the ZooKeeper door shows records without a session. Other records
// (URLs, whose key is their content) are returned as they are. writeMu
// held.
func (s *Server) settle(sv service, inst nacoswire.Instance, persistent bool, rec routes.Record) routes.Record {
	a, ok, err := sv.appInstanceOf(inst, persistent)
	if !ok || err != nil || rec.Znode == nil {
		return rec
	}
	z := *rec.Znode
	z.Owner = routes.OriginOwner(s.table.Local())
	if cur, held := s.table.LocalRecord(rec.Key()); held && cur.Znode != nil {
		z.Ctime, z.Version = cur.Znode.Ctime, cur.Znode.Version
		z.Data = routes.CuratorInstanceJSON(a.app, a.id, a.ip, a.port, a.md, z.Ctime)
		if bytes.Equal(z.Data, cur.Znode.Data) && z.Owner == cur.Znode.Owner {
			return cur
		}
		z.Version++
	}
	z.Stamp = s.table.Stamp()
	return routes.Record{Znode: &z}
}

// appHosts lists app's instances as Nacos instances of sv.
func (s *Server) appHosts(sv service) []nacoswire.Instance {
	if !sv.appLevel() {
		return nil
	}
	d, ok := s.table.App(sv.name)
	if !ok {
		return nil
	}
	out := make([]nacoswire.Instance, 0, len(d.Instances))
	for _, in := range d.Instances {
		if in.Problem != "" {
			continue
		}
		md := maps.Clone(in.Metadata)
		if md == nil {
			md = map[string]string{}
		}
		nacos := map[string]string{}
		for k, v := range md {
			if reservedParam(k) {
				nacos[k[len(paramPrefix):]] = v
				delete(md, k)
			}
		}
		if in.ID != in.Address+":"+strconv.Itoa(in.Port) {
			md[idKey] = in.ID
		}
		weight := 1.0
		if w, err := strconv.ParseFloat(nacos["weight"], 64); err == nil && w > 0 {
			weight = w
		}
		cluster := or(nacos["cluster"], defaultCluster)
		inst := nacoswire.Instance{IP: in.Address, Port: in.Port, Weight: weight, Healthy: true,
			Enabled: nacos["enabled"] != "false", Ephemeral: in.Agent != "", ClusterName: cluster,
			ServiceName: sv.group + "@@" + sv.name, Metadata: md}
		inst.InstanceID = instanceID(sv, inst.IP, inst.Port, cluster)
		out = append(out, inst)
	}
	return out
}

// appNames lists the applications with an instance, for the public
// namespace's DEFAULT_GROUP service list.
func (s *Server) appNames(ns, group string) []string {
	if ns != defaultNamespace || group != defaultGroup {
		return nil
	}
	var out []string
	for _, a := range s.table.Apps() {
		if a.Instances > 0 {
			out = append(out, a.Name)
		}
	}
	return out
}

// Configs that are application records.

func mappingPath(iface string) string { return routes.AppMappingRoot + "/" + iface }

// metadataPaths are where an application's MetadataInfo of one revision
// is: Java Dubbo's path first, then dubbo-go's ZooKeeper report's.
func metadataPaths(app, rev string) []string {
	return []string{routes.AppMetadataRoot + "/" + app + "/" + rev, "/dubbo/" + app + "/" + rev}
}

func (id configID) isMapping() bool { return id.tenant == "" && id.group == mappingGroup }

// isMetadataOf reports whether content is the MetadataInfo of app at rev.
func isMetadataOf(content []byte, app, rev string) bool {
	var m struct {
		App      string `json:"app"`
		Revision string `json:"revision"`
	}
	return json.Unmarshal(content, &m) == nil && m.App == app && m.Revision == rev
}

// appConfig reads a config that is an application record: ok false when
// id is none (then it is a plain config).
func (s *Server) appConfig(id configID) (content string, found, ok bool) {
	if id.isMapping() {
		apps := s.table.AppsOf(id.dataID)
		return strings.Join(apps, ","), len(apps) > 0, true
	}
	if id.tenant != "" || id.group == defaultGroup {
		return "", false, false
	}
	for _, p := range metadataPaths(id.dataID, id.group) {
		if z := s.znode(p); z != nil && isMetadataOf(z.Data, id.dataID, id.group) {
			return string(z.Data), true, true
		}
	}
	return "", false, false
}

// znode is the record shown at path p: of its holders, the latest write.
func (s *Server) znode(p string) *routes.Znode {
	var best *routes.Znode
	for _, h := range s.table.Holders(routes.ZnodeKey(p, "")) {
		if z := h.Rec.Znode; z != nil && (best == nil || z.Stamp > best.Stamp) {
			best = z
		}
	}
	return best
}

// appConfigWrite is the rules a publish of content as id writes, when id
// is an application record (ok false: a plain config). writeMu held.
func (s *Server) appConfigWrite(id configID, content string) (puts []routes.Record, ok bool) {
	now := time.Now().UnixMilli()
	if id.isMapping() {
		p, local := mappingPath(id.dataID), s.table.Local()
		z := routes.Znode{Path: p, Part: local, Data: []byte(content), Ctime: now, Mtime: now, Stamp: s.table.Stamp()}
		for _, h := range s.table.RulesWithPrefix(routes.ZnodePartsPrefix(p)) {
			z.Version = max(z.Version, h.Rec.Znode.Version+1)
			if h.Rec.Znode.Part == local {
				z.Ctime = h.Rec.Znode.Ctime
			}
		}
		return []routes.Record{{Znode: &z}}, true
	}
	if id.tenant != "" || id.group == defaultGroup || !isMetadataOf([]byte(content), id.dataID, id.group) {
		return nil, false
	}
	for _, p := range metadataPaths(id.dataID, id.group) {
		z := routes.Znode{Path: p, Data: []byte(content), Ctime: now, Mtime: now, Stamp: s.table.Stamp()}
		if cur := s.znode(p); cur != nil {
			z.Ctime, z.Version = cur.Ctime, cur.Version+1
		}
		puts = append(puts, routes.Record{Znode: &z})
	}
	return puts, true
}

// appConfigKeys are the rules a remove of id deletes, when id is an
// application record (ok false: a plain config): every part of a mapping,
// as a ZooKeeper delete of it does, or both metadata nodes.
func (s *Server) appConfigKeys(id configID) (keys []string, ok bool) {
	if id.isMapping() {
		for _, h := range s.table.RulesWithPrefix(routes.ZnodePartsPrefix(mappingPath(id.dataID))) {
			keys = append(keys, h.Rec.Key())
		}
		return keys, true
	}
	if _, found, ok := s.appConfig(id); !ok || !found {
		return nil, false
	}
	for _, p := range metadataPaths(id.dataID, id.group) {
		if _, isRule := s.table.Rule(routes.ZnodeKey(p, "")); isRule {
			keys = append(keys, routes.ZnodeKey(p, ""))
		}
	}
	return keys, true
}

// appChange is which subscriptions and config listens a change of a
// znode record at path p concerns: the application's service for an
// instance, the config key for a mapping or metadata node.
func appChange(p string) (app, config string) {
	if rest, ok := strings.CutPrefix(p, routes.AppsRoot+"/"); ok {
		if a, _, ok := strings.Cut(rest, "/"); ok {
			return a, ""
		}
		return "", ""
	}
	if iface, ok := strings.CutPrefix(p, routes.AppMappingRoot+"/"); ok && !strings.Contains(iface, "/") {
		return "", configID{"", mappingGroup, iface}.key()
	}
	rest, ok := strings.CutPrefix(p, routes.AppMetadataRoot+"/")
	if !ok {
		rest, ok = strings.CutPrefix(p, "/dubbo/")
	}
	if a, rev, ok2 := strings.Cut(rest, "/"); ok && ok2 && !strings.Contains(rev, "/") {
		return "", configID{"", rev, a}.key()
	}
	return "", ""
}
