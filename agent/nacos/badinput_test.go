package nacos

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/nacos/nacostest"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// Bad bytes get a Nacos ErrorResponse with grpc-status 0, and change nothing.
func TestBadPayloadsGetErrorResponses(t *testing.T) {
	s, reg := startServer(t)
	c := dial(t, s)
	huge := binary.BigEndian.AppendUint32([]byte{0}, nacoswire.MaxMessage+1)
	for _, tc := range []struct {
		name string
		body []byte
		code int
	}{
		{"not protobuf", nacoswire.AppendMessage(nil, []byte{0xff, 0xff}), nacoswire.ErrInvalidParam},
		{"oversized", huge, nacoswire.ErrInvalidParam},
		{"compressed", []byte{1, 0, 0, 0, 0}, nacoswire.ErrInvalidParam},
		{"body not JSON", nacoswire.AppendMessage(nil, (&nacoswire.Payload{Type: nacoswire.TypeInstance, Body: []byte("{")}).Marshal()), nacoswire.ErrInvalidParam},
		{"unknown type", nacostest.Frame("NoSuchRequest", nacoswire.Request{}), nacoswire.ErrNoHandler},
		{"bad service name", nacostest.Frame(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "a/b", dubboInst("10.0.0.1", 1))), nacoswire.ErrInvalidParam},
		{"bad ip", nacostest.Frame(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "svc", dubboInst("", 1))), nacoswire.ErrInvalidParam},
		{"bad port", nacostest.Frame(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "svc", dubboInst("10.0.0.1", 70000))), nacoswire.ErrInvalidParam},
		{"config too large", nacostest.Frame(nacoswire.TypeConfigPublish, nacoswire.ConfigPublishRequest{ConfigRequest: cfgReq("a"),
			Content: strings.Repeat("x", MaxConfigContent+1)}), nacoswire.ErrInvalidParam},
		{"bad data id", nacostest.Frame(nacoswire.TypeConfigPublish, nacoswire.ConfigPublishRequest{ConfigRequest: cfgReq("a b"), Content: "x"}), nacoswire.ErrInvalidParam},
		{"page size", nacostest.Frame(nacoswire.TypeServiceList, nacoswire.ServiceListRequest{PageSize: MaxPageSize + 1}), nacoswire.ErrInvalidParam},
	} {
		p := c.callRaw(tc.body)
		var r nacoswire.Response
		json.Unmarshal(p.Body, &r)
		if p.Type != nacoswire.TypeErrorResponse || r.Success || r.ErrorCode != tc.code || r.Message == "" {
			t.Errorf("%s: answered %s %+v, want ErrorResponse %d", tc.name, p.Type, r, tc.code)
		}
	}
	if n, m := reg.Routes.Len(); m != 0 {
		t.Fatalf("bad input changed the table: %d origins, %d records", n, m)
	}
}

// A request on a connection that never set up its bi-stream is refused
// with Nacos' UN_REGISTER code (the client reconnects), after SetupWait.
func TestRequestBeforeSetupIsUnregistered(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.SetupWait = 50_000_000 })
	d := dialNoSetup(t, s)
	p := d.callRaw(nacostest.Frame(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, dubboSvc, dubboInst("10.0.0.5", 1))))
	var r nacoswire.Response
	json.Unmarshal(p.Body, &r)
	if p.Type != nacoswire.TypeErrorResponse || r.ErrorCode != nacoswire.ErrUnregistered {
		t.Fatalf("answered %s %+v", p.Type, r)
	}
}

// A rule write the agent refuses (rules limit, failed save) is answered
// with Nacos' OVER_THRESHOLD and the agent's words, over gRPC and HTTP.
func TestRefusedRuleWriteIsAnError(t *testing.T) {
	s, reg := startServer(t)
	full := fmt.Errorf("agent: %w", routes.ErrRulesFull)
	reg.RulesErr.Store(&full)
	c := dial(t, s)
	p := c.callRaw(nacostest.Frame(nacoswire.TypeConfigPublish, nacoswire.ConfigPublishRequest{ConfigRequest: cfgReq("a"), Content: "x"}))
	var r nacoswire.Response
	json.Unmarshal(p.Body, &r)
	if p.Type != nacoswire.TypeErrorResponse || r.ErrorCode != nacoswire.ErrOverThreshold || !strings.Contains(r.Message, "rules limit") {
		t.Fatalf("gRPC publish answered %s %+v", p.Type, r)
	}
	in := nacoswire.Instance{IP: "10.0.0.9", Port: 80, Weight: 1, Enabled: true}
	p = c.callRaw(nacostest.Frame(nacoswire.TypeInstance, instReq(nacoswire.RegisterInstance, "static", in)))
	json.Unmarshal(p.Body, &r)
	if r.ErrorCode != nacoswire.ErrOverThreshold {
		t.Fatalf("persistent register answered %s %+v", p.Type, r)
	}
	if code, body := do(t, s, "POST", "/nacos/v1/cs/configs", url.Values{"dataId": {"a"}, "group": {"g"}, "content": {"x"}}); code != 503 ||
		!strings.Contains(body, "rules limit") {
		t.Fatalf("HTTP publish: %d %s", code, body)
	}
}
