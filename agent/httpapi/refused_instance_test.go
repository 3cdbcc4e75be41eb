package httpapi

import (
	"net"
	"testing"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/routes"
)

// An instance registration naming interfaces that is refused (its path
// holds a ZooKeeper session's instance: 409; past the record budget:
// 507) leaves no application mapping or metadata behind: bad input
// changes nothing.
func TestRefusedInstanceLeavesNoMapping(t *testing.T) {
	table := routes.NewTable("lone", 1)
	h := host.New(host.Config{Table: table, Budget: routes.Budget{Records: 2}})
	s, err := New(Config{Host: h, Agent: loneAgent{}, Node: "lone", Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	base := "http://" + s.Addr()
	// A ZooKeeper session's instance at greeter/10.0.0.1:20000.
	zk := routes.Znode{Path: routes.InstancePath("greeter", "10.0.0.1:20000"), Owner: 0x1234, Data: []byte("{}")}
	if _, err := h.For("zookeeper").Apply([]routes.Record{{Znode: &zk}}, nil); err != nil {
		t.Fatal(err)
	}
	mapped := func() int {
		return len(table.RulesWithPrefix(routes.ZnodeKey(routes.AppMappingRoot, ""))) +
			len(table.RulesWithPrefix(routes.ZnodeKey(routes.AppMetadataRoot, ""))) +
			len(table.RulesWithPrefix(routes.ZnodeKey("/dubbo/greeter", "")))
	}
	if code, out, _ := doJSON(t, "PUT", base+"/v1/apps/greeter/instances",
		`{"address":"10.0.0.1","port":20000,"interfaces":["org.demo.Greeter"]}`); code != 409 {
		t.Fatalf("an instance at a ZooKeeper session's path: %d %v, want 409", code, out)
	}
	if n := mapped(); n != 0 {
		t.Fatalf("a refused (409) registration left %d mapping or metadata rules", n)
	}
	// Past the budget: one record is held, this and the next take two.
	if code, out, _ := doJSON(t, "PUT", base+"/v1/urls", `{"url":"dubbo://10.0.0.9:20880/org.demo.Other"}`); code != 200 {
		t.Fatalf("a URL within the budget: %d %v", code, out)
	}
	if code, out, _ := doJSON(t, "PUT", base+"/v1/apps/greeter/instances",
		`{"address":"10.0.0.2","port":20000,"interfaces":["org.demo.Greeter"]}`); code != 507 {
		t.Fatalf("an instance past the budget: %d %v, want 507", code, out)
	}
	if n := mapped(); n != 0 {
		t.Fatalf("a refused (507) registration left %d mapping or metadata rules", n)
	}
	if code, out, _ := doJSON(t, "GET", base+"/v1/services/org.demo.Greeter/apps", ""); code != 200 || len(out["apps"].([]any)) != 0 {
		t.Fatalf("the interface's applications after refusals: %d %v, want none", code, out)
	}
}
