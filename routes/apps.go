package routes

import (
	"sort"
	"strings"
)

// Applications and instances: Dubbo 3's application-level discovery, read
// from the znode records its registries write (docs/protocols/dubbo-apps.md):
//
//	/services/{app}/{id}              an instance: Curator ServiceInstance JSON
//	/dubbo/mapping/{interface}        interface → comma-separated applications
//	/dubbo/metadata/{app}/{revision}  an application's MetadataInfo (Java, metadata-type=remote)
//
// They are not a record kind of their own: the znode record is the one
// record every door reads. An instance written over ZooKeeper is its
// session's ephemeral znode; one registered over HTTP is the same znode
// record held under a TTL (agent.RegisterInstance), and one registered
// through Nacos the same held by its connection (agent/nacos apps.go,
// which also maps the mapping and metadata configs onto the znodes
// below), so ZooKeeper clients see it as Curator wrote it and the views
// below see them alike. All are records of the agent whose door
// registered them, withdrawn with it.
//
// The views index the records' pointers as they are linked (link parses an
// instance's JSON once, not at every query); a path held by several
// origins is shown once, from the record with the highest Stamp (the most
// recent write cluster-wide), the origin's name breaking a tie.
const (
	AppsRoot        = "/services"
	AppMappingRoot  = "/dubbo/mapping"
	AppMetadataRoot = "/dubbo/metadata"
)

// InstancePath is the znode of instance id of app.
func InstancePath(app, id string) string { return AppsRoot + "/" + app + "/" + id }

// App is one application: its instances and the interfaces whose mapping
// names it.
type App struct {
	Name       string   `json:"name"`
	Instances  int      `json:"instances"`
	Interfaces []string `json:"interfaces"`
}

// AppDetail is one application with its instances, sorted by id.
type AppDetail struct {
	Name       string     `json:"name"`
	Interfaces []string   `json:"interfaces"`
	Instances  []Instance `json:"instances"`
}

// appIndex is viewIndex's part for applications.
type appIndex struct {
	instances map[string]map[*Znode]*Instance // app → instance records
	mapped    map[string]map[*Znode][]string  // interface → mapping records → app names
	metadata  map[string]map[*Znode]appMeta   // app → metadata records
}

type appMeta struct {
	revision string
	services []string
}

func newAppIndex() appIndex {
	return appIndex{instances: map[string]map[*Znode]*Instance{}, mapped: map[string]map[*Znode][]string{},
		metadata: map[string]map[*Znode]appMeta{}}
}

// appPathKind classifies a znode path: an instance (a = app, b = id), a
// mapping (a = interface) or a metadata node (a = app, b = revision).
type appPathKind int

const (
	notAppPath appPathKind = iota
	instancePath
	mappingPath
	metadataPath
)

func classifyAppPath(p string) (kind appPathKind, a, b string) {
	if rest, ok := strings.CutPrefix(p, AppsRoot+"/"); ok {
		if app, id, ok := strings.Cut(rest, "/"); ok && app != "" && id != "" && !strings.Contains(id, "/") {
			return instancePath, app, id
		}
		return notAppPath, "", ""
	}
	if rest, ok := strings.CutPrefix(p, AppMappingRoot+"/"); ok {
		if rest != "" && !strings.Contains(rest, "/") {
			return mappingPath, rest, ""
		}
		return notAppPath, "", ""
	}
	if rest, ok := strings.CutPrefix(p, AppMetadataRoot+"/"); ok {
		if app, rev, ok := strings.Cut(rest, "/"); ok && app != "" && rev != "" && !strings.Contains(rev, "/") {
			return metadataPath, app, rev
		}
	}
	return notAppPath, "", ""
}

// mappingNames splits a mapping's value into its application names.
func mappingNames(data []byte) []string {
	var out []string
	for _, n := range strings.Split(string(data), ",") {
		if n = strings.TrimSpace(n); n != "" && !strings.Contains(n, "/") {
			out = append(out, n)
		}
	}
	return out
}

func (v *viewIndex) linkZnode(z *Znode, origin string) {
	switch kind, a, b := classifyAppPath(z.Path); kind {
	case instancePath:
		in := parseInstance(a, b, z.Data)
		in.Agent, in.stamp = origin, z.Stamp
		if origin == RulesOrigin {
			in.Agent = ""
		}
		addAppRec(v.apps.instances, a, z, in)
	case mappingPath:
		addAppRec(v.apps.mapped, a, z, mappingNames(z.Data))
	case metadataPath:
		addAppRec(v.apps.metadata, a, z, appMeta{revision: b, services: metadataServices(z.Data)})
	}
}

func addAppRec[V any](m map[string]map[*Znode]V, name string, z *Znode, val V) {
	inner, ok := m[name]
	if !ok {
		inner = map[*Znode]V{}
		m[name] = inner
	}
	inner[z] = val
}

func removeAppRec[V any](m map[string]map[*Znode]V, name string, z *Znode) {
	if inner, ok := m[name]; ok {
		delete(inner, z)
		if len(inner) == 0 {
			delete(m, name)
		}
	}
}

func (v *viewIndex) unlinkZnode(z *Znode) {
	switch kind, a, _ := classifyAppPath(z.Path); kind {
	case instancePath:
		removeAppRec(v.apps.instances, a, z)
	case mappingPath:
		removeAppRec(v.apps.mapped, a, z)
	case metadataPath:
		removeAppRec(v.apps.metadata, a, z)
	}
}

// Watch keys of the application views (watch.go).
var WatchApps = Watch{"\x00apps"} // the list of applications, with counts and interfaces

func appKey(app string) string      { return "a\x00" + app }
func appsOfKey(iface string) string { return "m\x00" + iface }

// WatchApp is the watch of one application's detail.
func WatchApp(app string) Watch { return Watch{appKey(app)} }

// WatchAppsOf is the watch of the applications a mapping names for iface.
func WatchAppsOf(iface string) Watch { return Watch{appsOfKey(iface)} }

// markZnode marks the views a znode record changes: any instance or
// mapping changes the list (its counts and interfaces); an instance and a
// metadata node their application; a mapping every application it names
// (marked at unlink and at link, so the names it had and has) and its
// interface's applications.
func (v *viewIndex) markZnode(w *watcher, z *Znode) {
	switch kind, a, _ := classifyAppPath(z.Path); kind {
	case instancePath:
		w.mark(appKey(a))
		w.mark(WatchApps[0])
	case mappingPath:
		w.mark(WatchApps[0])
		w.mark(appsOfKey(a))
		for _, n := range mappingNames(z.Data) {
			w.mark(appKey(n))
		}
	case metadataPath:
		w.mark(appKey(a))
	}
}

// appInterfaces maps each application to the interfaces whose mapping
// names it, sorted. The table's mu must be held.
func (v *viewIndex) appInterfaces() map[string][]string {
	out := map[string][]string{}
	for iface, parts := range v.apps.mapped {
		seen := map[string]bool{}
		for _, names := range parts {
			for _, n := range names {
				if !seen[n] {
					seen[n] = true
					out[n] = append(out[n], iface)
				}
			}
		}
	}
	for _, l := range out {
		sort.Strings(l)
	}
	return out
}

// instancesOf is app's instances, one per id, sorted by id. The table's mu
// must be held.
func (v *viewIndex) instancesOf(app string) []Instance {
	best := map[string]*Instance{}
	for _, in := range v.apps.instances[app] {
		if p, ok := best[in.ID]; !ok || in.stamp > p.stamp || in.stamp == p.stamp && in.Agent < p.Agent {
			best[in.ID] = in
		}
	}
	out := make([]Instance, 0, len(best))
	for _, in := range best {
		out = append(out, in.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Apps lists every application with an instance or named by a mapping,
// sorted by name.
func (t *Table) Apps() []App {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ifaces := t.views.appInterfaces()
	names := map[string]bool{}
	for app := range t.views.apps.instances {
		names[app] = true
	}
	for app := range ifaces {
		names[app] = true
	}
	out := make([]App, 0, len(names))
	for _, app := range sortedKeys(names) {
		out = append(out, App{Name: app, Instances: len(t.views.instancesOf(app)), Interfaces: nonNilStrings(ifaces[app])})
	}
	return out
}

// App is one application's detail, ok false when it has no instance and
// no mapping names it. Each instance's Services are those of the metadata
// node for its revision, when one is registered.
func (t *Table) App(app string) (AppDetail, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var ifaces []string
	for iface, parts := range t.views.apps.mapped {
	parts:
		for _, names := range parts {
			for _, n := range names {
				if n == app {
					ifaces = append(ifaces, iface)
					break parts
				}
			}
		}
	}
	ins := t.views.instancesOf(app)
	if len(ins) == 0 && len(ifaces) == 0 {
		return AppDetail{}, false
	}
	sort.Strings(ifaces)
	metas := t.views.apps.metadata[app]
	for i := range ins {
		for _, m := range metas {
			if m.revision == ins[i].Revision && ins[i].Revision != "" {
				ins[i].Services = append([]string(nil), m.services...)
			}
		}
	}
	return AppDetail{Name: app, Interfaces: nonNilStrings(ifaces), Instances: ins}, true
}

// AppsOf lists the applications the mapping names for iface, sorted.
func (t *Table) AppsOf(iface string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	seen := map[string]bool{}
	for _, names := range t.views.apps.mapped[iface] {
		for _, n := range names {
			seen[n] = true
		}
	}
	return sortedKeys(seen)
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
