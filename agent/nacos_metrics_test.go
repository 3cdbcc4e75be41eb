package agent_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/nacos/nacostest"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/internal/testutil"
)

// The Nacos door's figures are on /metrics beside the other doors':
// connections, instances held (and those over the 1.x API), subscribers,
// requests by type and result, pushes, the 1.x API's requests by route
// and status.
func TestNacosMetrics(t *testing.T) {
	c := agenttest.Start(t, 1)
	a := c.Agent(0)
	nc, _ := registerOverNacos(t, a)
	if err := nc.Register("", nacosHeldInst()); err == nil {
		t.Fatal("a registration without a service name answered success")
	}
	var resp nacoswire.ServiceInfoResponse
	sub := nacoswire.SubscribeServiceRequest{NamingRequest: nacoswire.NamingRequest{ServiceName: nacosHeldService}, Subscribe: true}
	if err := nc.Call(nacoswire.TypeSubscribeService, sub, &resp); err != nil || !resp.Success {
		t.Fatalf("subscribe: %v %+v", err, resp)
	}
	other := nacosHeldInst()
	other.IP = "10.0.0.12"
	if err := nacostest.Dial(t, a.Addr("nacos-grpc")).Register(nacosHeldService, other); err != nil { // pushed to the subscriber
		t.Fatal(err)
	}
	if code, body := nacosHTTP(t, a, "POST", "/nacos/v1/ns/instance", beatInst); code != 200 {
		t.Fatalf("register over HTTP: %d %s", code, body)
	}
	nacosHTTP(t, a, "GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"orders"}})
	testutil.Eventually(t, 15*time.Second, func() error {
		resp, err := http.Get("http://" + a.HTTPAddr() + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, want := range []string{"namecast_nacos_connections 2", "namecast_nacos_instances 3", "namecast_nacos_http_instances 1",
			"namecast_nacos_subscribers 1", "namecast_nacos_closing 0", "namecast_nacos_config_listeners 0",
			`namecast_nacos_requests_total{code="0",type="InstanceRequest"} 2`,
			`namecast_nacos_pushes_total{result="ok",type="NotifySubscriberRequest"}`,
			`namecast_nacos_requests_total{code="400",type="InstanceRequest"} 1`,
			`namecast_nacos_requests_total{code="0",type="SubscribeServiceRequest"} 1`,
			`namecast_nacos_http_requests_total{route="POST /nacos/v1/ns/instance",status="200"} 1`,
			`namecast_nacos_http_requests_total{route="GET /nacos/v1/ns/instance/list",status="200"} 1`} {
			if !strings.Contains(string(b), want) {
				return fmt.Errorf("no %s in /metrics", want)
			}
		}
		return nil
	})
}
