package routes

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// What Java Dubbo 3 writes through Curator 5.4 (TestCuratorAppDiscovery*
// in test/zookeeper prints it from the real library).
const javaInstanceJSON = `{"name":"demo-provider","id":"10.0.0.5:20880","address":"10.0.0.5","port":20880,"sslPort":null,` +
	`"payload":{"@class":"org.apache.dubbo.registry.zookeeper.ZookeeperInstance","id":"10.0.0.5:20880","name":"demo-provider",` +
	`"metadata":{"dubbo.endpoints":"[{\"port\":20880,\"protocol\":\"dubbo\"}]","dubbo.metadata.revision":"6b5a","dubbo.metadata.storage-type":"local"}},` +
	`"registrationTimeUTC":1735689600000,"serviceType":"DYNAMIC","uriSpec":null}`

// What dubbo-go 3.3 writes: no sslPort, serviceType or enabled.
const goInstanceJSON = `{"name":"go-provider","id":"127.0.0.1:20000","address":"127.0.0.1","port":20000,` +
	`"payload":{"@class":"org.apache.dubbo.registry.zookeeper.ZookeeperInstance","id":"127.0.0.1:20000","name":"go-provider",` +
	`"metadata":{"dubbo.metadata.revision":"r1","dubbo.metadata.storage-type":"local"}}}`

func znodeRec(path, data string, owner int64) Record {
	return Record{Znode: &Znode{Path: path, Data: []byte(data), Owner: owner}}
}

func TestAppsFromZnodeRecords(t *testing.T) {
	a, b := NewTable("a", 1), NewTable("b", 1)
	d, _ := a.ApplyLocal([]Record{
		znodeRec(InstancePath("demo-provider", "10.0.0.5:20880"), javaInstanceJSON, 7),
		znodeRec(InstancePath("go-provider", "127.0.0.1:20000"), goInstanceJSON, 8),
		znodeRec(InstancePath("broken", "10.0.0.9:1"), "not json", 9),
		znodeRec("/services/demo-provider", "", 0),             // the container: not an instance
		znodeRec("/services/x/y/z", "", 0),                     // too deep
		znodeRec("/dubbo/config/dubbo/x.configurators", "", 0), // unrelated
	}, nil)
	b.Apply(d)
	r, _ := a.ApplyRules([]Record{
		{Znode: &Znode{Path: AppMappingRoot + "/demo.Api", Part: "a", Data: []byte("demo-provider,go-provider")}},
		{Znode: &Znode{Path: AppMappingRoot + "/demo.Api", Part: "b", Data: []byte("other-app")}},
		{Znode: &Znode{Path: AppMappingRoot + "/demo.Other", Part: "a", Data: []byte("demo-provider")}},
		{Znode: &Znode{Path: AppMetadataRoot + "/demo-provider/6b5a", Data: []byte(`{"app":"demo-provider","revision":"6b5a","services":{"demo.Api:dubbo":{"name":"demo.Api"},"demo.Other:dubbo":{"name":"demo.Other"}}}`)}},
	}, nil)
	b.Apply(r)

	want := []App{
		{Name: "broken", Instances: 1, Interfaces: []string{}},
		{Name: "demo-provider", Instances: 1, Interfaces: []string{"demo.Api", "demo.Other"}},
		{Name: "go-provider", Instances: 1, Interfaces: []string{"demo.Api"}},
		{Name: "other-app", Instances: 0, Interfaces: []string{"demo.Api"}},
	}
	if got := b.Apps(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Apps() = %+v\nwant %+v", got, want)
	}
	got, ok := b.App("demo-provider")
	if !ok || len(got.Instances) != 1 {
		t.Fatalf("App(demo-provider) = %+v, %v", got, ok)
	}
	in := got.Instances[0]
	if in.Address != "10.0.0.5" || in.Port != 20880 || in.Revision != "6b5a" || in.Agent != "a" ||
		in.Registered != 1735689600000 || in.Metadata["dubbo.endpoints"] != `[{"port":20880,"protocol":"dubbo"}]` ||
		!reflect.DeepEqual(in.Services, []string{"demo.Api", "demo.Other"}) || in.Problem != "" {
		t.Fatalf("instance %+v", in)
	}
	if !reflect.DeepEqual(got.Interfaces, []string{"demo.Api", "demo.Other"}) {
		t.Fatalf("interfaces %v", got.Interfaces)
	}
	br, _ := b.App("broken")
	if bi := br.Instances[0]; bi.Problem == "" || bi.Address != "10.0.0.9" || bi.Port != 1 {
		t.Fatalf("a broken instance is listed with its problem and the id's address: %+v", bi)
	}
	if _, ok := b.App("nobody"); ok {
		t.Fatal("an unknown application answered")
	}
	if got := b.AppsOf("demo.Api"); !reflect.DeepEqual(got, []string{"demo-provider", "go-provider", "other-app"}) {
		t.Fatalf("AppsOf(demo.Api) = %v", got)
	}

	// The origin's death withdraws its instances; the mappings (rules) stay.
	b.DropOrigin("a", 1)
	if d, _ := b.App("demo-provider"); len(d.Instances) != 0 || len(d.Interfaces) != 2 {
		t.Fatalf("after a's death: %+v", d)
	}
	for _, app := range b.Apps() {
		if app.Instances != 0 {
			t.Fatalf("after a's death %s still has %d instances", app.Name, app.Instances)
		}
	}
}

// One path held by two agents (a session re-registered on another agent
// before the first withdrew) is one instance: the most recent record.
func TestAppInstanceHeldTwiceIsShownOnceByRecency(t *testing.T) {
	a, b, c := NewTable("a", 1), NewTable("b", 1), NewTable("c", 1)
	p := InstancePath("app", "10.0.0.1:1")
	d1, _ := b.ApplyLocal([]Record{znodeRec(p, goInstanceJSON, 1)}, nil)
	a.Apply(d1)
	c.Apply(d1)
	// a has seen b's record (its stamp), so its own is later.
	newer := `{"name":"app","id":"10.0.0.1:1","address":"10.0.0.1","port":1,"payload":{"metadata":{"dubbo.metadata.revision":"r2"}}}`
	d2, _ := a.ApplyLocal([]Record{znodeRec(p, newer, 2)}, nil)
	c.Apply(d2)
	got, _ := c.App("app")
	if len(got.Instances) != 1 || got.Instances[0].Revision != "r2" || got.Instances[0].Agent != "a" {
		t.Fatalf("instances %+v, want a's r2 only", got.Instances)
	}
	if apps := c.Apps(); len(apps) != 1 || apps[0].Instances != 1 {
		t.Fatalf("apps %+v", apps)
	}
}

// An application's watch moves for its instances, its metadata and the
// mappings naming it (old names and new), not for another application's.
func TestAppWatches(t *testing.T) {
	a, b := NewTable("a", 1), NewTable("b", 1)
	app, list, of := WatchApp("app"), WatchApps, WatchAppsOf("demo.Api")
	put := func(recs ...Record) {
		d, _ := a.ApplyLocal(recs, nil)
		b.Apply(d)
	}
	moved := func(w Watch, before uint64, change func()) bool {
		change()
		return b.IndexOf(w) > before
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	woke := make(chan uint64, 1)
	seen := b.IndexOf(app)
	go func() { woke <- b.WaitFor(ctx, app, seen) }()
	put(znodeRec(InstancePath("app", "h:1"), goInstanceJSON, 1))
	if i := <-woke; i <= seen {
		t.Fatalf("the app's watch woke at %d, not past %d", i, seen)
	}
	if b.IndexOf(list) != b.Index() {
		t.Fatal("the list's index did not move for an instance")
	}
	// Another application's instance: the app's index stays unless a key
	// the change marks (other's, the list's) shares a slot with app's (a
	// wake-up for nothing, allowed by design).
	other := WatchApp("other")
	before := b.IndexOf(app)
	otherRec := znodeRec(InstancePath("other", "h:2"), goInstanceJSON, 1)
	if !moved(other, b.IndexOf(other), func() { put(otherRec) }) {
		t.Fatal("other's index did not move for its instance")
	}
	if !b.Overlaps(app, WatchOf(otherRec)) && b.IndexOf(app) != before {
		t.Fatal("app's index moved for other's instance")
	}
	// A mapping naming app moves app and the interface's list; rewriting
	// it without app moves app again (its old names are marked).
	m := Znode{Path: AppMappingRoot + "/demo.Api", Part: "a", Data: []byte("app")}
	if !moved(app, b.IndexOf(app), func() { put(Record{Znode: &m}) }) || b.IndexOf(of) != b.Index() {
		t.Fatal("a mapping naming app did not move app's and the interface's index")
	}
	m2 := m
	m2.Data = []byte("other")
	if !moved(app, b.IndexOf(app), func() { put(Record{Znode: &m2}) }) {
		t.Fatal("a mapping that stopped naming app did not move app's index")
	}
	// A metadata node moves its application.
	if !moved(app, b.IndexOf(app), func() { put(znodeRec(AppMetadataRoot+"/app/r1", `{"services":{}}`, 0)) }) {
		t.Fatal("a metadata node did not move its application's index")
	}
	// WatchOf names the keys a change marks.
	for _, r := range []Record{znodeRec(InstancePath("app", "h:1"), "", 0), {Znode: &m}} {
		w := WatchOf(r)
		if !watchHas(w, appKey("app")) || !watchHas(w, WatchApps[0]) {
			t.Fatalf("WatchOf(%s) = %q", r.Znode.Path, w)
		}
	}
}

func watchHas(w Watch, k string) bool {
	for _, x := range w {
		if x == k {
			return true
		}
	}
	return false
}

// The JSON namecast writes for an instance registered over HTTP reads
// back as the instance, and carries every field Curator 5.4 writes.
func TestCuratorInstanceJSONRoundTrip(t *testing.T) {
	b := CuratorInstanceJSON("app", "10.0.0.1:20880", "10.0.0.1", 20880, map[string]string{MetadataRevisionKey: "r1", "k": "v"}, 1735689600000)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"name", "id", "address", "port", "sslPort", "payload", "registrationTimeUTC", "serviceType", "uriSpec"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("field %q missing from %s", f, b)
		}
	}
	in := parseInstance("app", "10.0.0.1:20880", b)
	if in.Address != "10.0.0.1" || in.Port != 20880 || in.Revision != "r1" || in.Metadata["k"] != "v" || in.Registered != 1735689600000 || in.Problem != "" {
		t.Fatalf("read back %+v from %s", in, b)
	}
}
