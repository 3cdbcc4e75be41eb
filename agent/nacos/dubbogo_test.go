package nacos

import (
	"testing"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// dubbo-go's NacosRegistry (registry/nacos/registry.go createRegisterParam)
// adds nacos.category to the URL's parameters as the instance's metadata:
// a nacos.* key the door does not use itself is the client's metadata,
// kept and read back, not refused.
func TestDubboGoNacosCategoryIsMetadata(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	in := dubboInst("10.0.0.5", 20880)
	in.Metadata["nacos.category"] = "providers"
	var resp nacoswire.InstanceResponse
	c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, dubboSvc, in), &resp)
	mustOK(t, "register", resp.Response)
	want := "dubbo://10.0.0.5:20880/demo.Api?category=providers&interface=demo.Api&nacos.category=providers&side=provider&version=1.0.0"
	if got := reg.Routes.URLs("demo.Api", "providers"); len(got) != 1 || got[0] != want {
		t.Fatalf("URL records %q, want [%s]", got, want)
	}
	var q nacoswire.ServiceInfoResponse
	c.call(nacoswire.TypeServiceQuery, nacoswire.ServiceQueryRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: dubboSvc}}, &q)
	if h := q.ServiceInfo.Hosts; len(h) != 1 || h[0].Metadata["nacos.category"] != "providers" {
		t.Fatalf("hosts %+v", h)
	}
	// The door's own keys stay reserved: a client cannot move an
	// instance to another namespace through its metadata.
	in.Metadata["nacos.namespace"] = "dev"
	c.call(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, dubboSvc, in), &resp)
	if resp.Success || resp.ErrorCode != nacoswire.ErrInvalidParam {
		t.Fatalf("metadata nacos.namespace accepted: %+v", resp.Response)
	}
}
