package nacos

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// A beat for an instance the agent does not hold (it restarted without
// its data dir, or the client's server list sent the beat to another
// agent) registers the instance from the beat's JSON and answers 10200,
// as Nacos' handleBeat; a light beat (no JSON) still answers 20404.
func TestHTTPBeatRegistersUnknownInstance(t *testing.T) {
	s, _ := startServer(t)
	beatForm := url.Values{"serviceName": {"DEFAULT_GROUP@@orders"},
		"beat": {`{"ip":"10.0.0.7","port":8080,"cluster":"c1","weight":2,"metadata":{"zone":"a"},"serviceName":"DEFAULT_GROUP@@orders","scheduled":false,"period":5000,"stopped":false}`}}
	if code, body := do(t, s, "PUT", "/nacos/v1/ns/instance/beat", beatForm); code != 200 || !strings.Contains(body, `"code":10200`) {
		t.Fatalf("beat for an unknown instance: %d %s; want 10200", code, body)
	}
	hosts := listOf(t, s, url.Values{"serviceName": {"orders"}}).Hosts
	if len(hosts) != 1 || hosts[0].IP != "10.0.0.7" || hosts[0].Port != 8080 || hosts[0].ClusterName != "c1" ||
		hosts[0].Weight != 2 || hosts[0].Metadata["zone"] != "a" || !hosts[0].Healthy {
		t.Fatalf("registered from the beat: %+v", hosts)
	}
	if code, body := do(t, s, "PUT", "/nacos/v1/ns/instance/beat", beatForm); code != 200 || !strings.Contains(body, `"code":10200`) {
		t.Fatalf("second beat: %d %s", code, body)
	}
	if n := len(listOf(t, s, url.Values{"serviceName": {"orders"}}).Hosts); n != 1 {
		t.Fatalf("a second beat made %d instances", n)
	}
	light := url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.8"}, "port": {"8080"}}
	if code, body := do(t, s, "PUT", "/nacos/v1/ns/instance/beat", light); code != 200 || !strings.Contains(body, `"code":20404`) {
		t.Fatalf("light beat for an unknown instance: %d %s; want 20404", code, body)
	}
	bad := url.Values{"serviceName": {"orders"}, "beat": {`{"ip":"10.0.0.9","port":1,"weight":20000}`}}
	if code, body := do(t, s, "PUT", "/nacos/v1/ns/instance/beat", bad); code != 400 || !strings.Contains(body, "weights range") {
		t.Fatalf("beat with a weight out of range: %d %s; want 400", code, body)
	}
}

// An HTTP instance without a beat for half its BeatTimeout (15 s of 30
// s, as Nacos) is listed unhealthy and left out of healthyOnly answers; a
// beat makes it healthy again; without beats for BeatTimeout it goes.
func TestHTTPBeatHealth(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.BeatTimeout = 4 * time.Second })
	inst := url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.3"}, "port": {"8080"}}
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", inst); code != 200 {
		t.Fatalf("register: %d %s", code, body)
	}
	registered := time.Now()
	healthy := func(want bool, count int) func() error {
		return func() error {
			all := listOf(t, s, url.Values{"serviceName": {"orders"}}).Hosts
			only := listOf(t, s, url.Values{"serviceName": {"orders"}, "healthyOnly": {"true"}}).Hosts
			if len(all) != count || count == 1 && (all[0].Healthy != want || (len(only) == 1) != want) {
				return fmt.Errorf("listed %+v, healthy only %+v; want %d healthy=%v", all, only, count, want)
			}
			return nil
		}
	}
	testutil.Eventually(t, 10*time.Second, healthy(false, 1))
	if d := time.Since(registered); d < 2*time.Second {
		t.Fatalf("unhealthy after %v, before the health timeout (2 s)", d)
	}
	if code, body := do(t, s, "PUT", "/nacos/v1/ns/instance/beat", inst); code != 200 || !strings.Contains(body, `"code":10200`) {
		t.Fatalf("beat: %d %s", code, body)
	}
	if err := healthy(true, 1)(); err != nil {
		t.Fatalf("after a beat: %v", err)
	}
	testutil.Eventually(t, 10*time.Second, healthy(false, 0))
}
