package httpapi

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// An instance registered with a TTL is an application instance in the
// views, renewing it with the same content changes nothing, and it goes
// when the TTL runs out; its mapping and metadata (rules) stay.
func TestInstanceOverHTTPIsAnAppAndExpires(t *testing.T) {
	a := startLone(t)
	reg := InstanceRegistration{App: "greeter", Address: "10.0.0.1", Port: 20000, Interfaces: []string{"org.demo.Greeter"}}
	in, err := a.RegisterInstance(reg, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := a.table.App("greeter")
	if !ok || len(d.Instances) != 1 || d.Instances[0].ID != "10.0.0.1:20000" || d.Instances[0].Revision != in.Revision ||
		d.Instances[0].Agent != a.table.Local() || strings.Join(d.Interfaces, ",") != "org.demo.Greeter" ||
		strings.Join(d.Instances[0].Services, ",") != "org.demo.Greeter" {
		t.Fatalf("App(greeter) = %+v, %v", d, ok)
	}
	before := a.table.Index()
	if _, err := a.RegisterInstance(reg, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if a.table.Index() != before {
		t.Fatal("renewing an unchanged instance changed the table")
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if d, _ := a.table.App("greeter"); len(d.Instances) != 0 {
			return fmt.Errorf("still %d instances", len(d.Instances))
		}
		return nil
	})
	if got := a.table.AppsOf("org.demo.Greeter"); len(got) != 1 || got[0] != "greeter" {
		t.Fatalf("the mapping after expiry: %v", got)
	}
}

// Bad registrations answer an error and change nothing.
func TestBadInstanceChangesNothing(t *testing.T) {
	a := startLone(t)
	before := a.table.Index()
	for _, r := range []InstanceRegistration{
		{App: "", Address: "10.0.0.1", Port: 1},
		{App: "a/b", Address: "10.0.0.1", Port: 1},
		{App: "a", Address: "", Port: 1},
		{App: "a", Address: "10.0.0.1", Port: 0},
		{App: "a", Address: "10.0.0.1", Port: 70000},
		{App: "a", Address: "10.0.0.1", Port: 1, ID: "x/y"},
		{App: "a", Address: "10.0.0.1", Port: 1, Interfaces: []string{"bad/iface"}},
		{App: "a", Address: "10.0.0.1", Port: 1, Metadata: map[string]string{"k": strings.Repeat("v", maxMetadataValue+1)}},
	} {
		if _, err := a.RegisterInstance(r, 0); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
	if a.table.Index() != before || len(a.table.Apps()) != 0 {
		t.Fatalf("bad registrations changed the table: %+v", a.table.Apps())
	}
	if ok, err := a.UnregisterInstance("nobody", "10.0.0.1:1"); ok || err != nil {
		t.Fatalf("unregistering nothing: %v %v", ok, err)
	}
}
