package nacos

import (
	"net/url"
	"strings"
	"testing"
)

// A cluster name other than letters, digits and '-' is refused as Nacos'
// NamingUtils.checkInstanceIsLegal refuses it, through the 1.x and the v2
// API, and nothing is registered; east-1 is taken.
func TestClusterNameIsChecked(t *testing.T) {
	s, _ := startServer(t)
	const want = "Instance 'clusterName' should be characters with only 0-9a-zA-Z-. (current: c1,c2)"
	form := url.Values{"serviceName": {"cl"}, "ip": {"10.0.0.7"}, "port": {"80"}, "clusterName": {"c1,c2"}}
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", form); code != 400 || body != want {
		t.Errorf("1.x register in c1,c2: %d %s, want 400 %s", code, body, want)
	}
	if code, body := do(t, s, "POST", "/nacos/v2/ns/instance", form); code != 400 ||
		!strings.Contains(body, `"code":21004`) || !strings.Contains(body, want) {
		t.Errorf("v2 register in c1,c2: %d %s, want 400 21004 %s", code, body, want)
	}
	if info := listOf(t, s, url.Values{"serviceName": {"cl"}}); len(info.Hosts) != 0 {
		t.Errorf("the refused instance is listed: %+v", info.Hosts)
	}
	form.Set("clusterName", "east-1")
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", form); code != 200 {
		t.Errorf("register in east-1: %d %s", code, body)
	}
	if info := listOf(t, s, url.Values{"serviceName": {"cl"}, "clusters": {"east-1"}}); len(info.Hosts) != 1 {
		t.Errorf("east-1 lists %+v, want the instance", info.Hosts)
	}
}
