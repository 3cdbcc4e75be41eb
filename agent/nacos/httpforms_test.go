package nacos

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// listOf lists a service over the 1.x API.
func listOf(t *testing.T, s *Server, form url.Values) nacoswire.ServiceInfo {
	t.Helper()
	code, body := do(t, s, "GET", "/nacos/v1/ns/instance/list", form)
	var info nacoswire.ServiceInfo
	if err := json.Unmarshal([]byte(body), &info); code != 200 || err != nil {
		t.Fatalf("list %v: %d %s", form, code, body)
	}
	return info
}

// The parameter forms Nacos' HttpRequestInstanceBuilder and parseMetadata
// accept: clusterName (or cluster), enable as well as enabled, metadata
// as JSON with numbers and booleans or as k=v,k2=v2, weight 0 kept,
// healthy=false kept (out of healthyOnly answers).
func TestHTTPParameterForms(t *testing.T) {
	s, reg := startServer(t)
	reg1 := url.Values{"serviceName": {"forms"}, "ip": {"10.0.0.1"}, "port": {"80"}, "clusterName": {"east"},
		"weight": {"0"}, "metadata": {`{"n":1,"f":1.5,"b":true,"s":"x"}`}}
	reg2 := url.Values{"serviceName": {"forms"}, "ip": {"10.0.0.2"}, "port": {"80"}, "cluster": {"west"},
		"healthy": {"false"}, "metadata": {"k=v,k2=v2,"}}
	reg3 := url.Values{"serviceName": {"forms"}, "ip": {"10.0.0.3"}, "port": {"80"}, "enable": {"false"}}
	for _, f := range []url.Values{reg1, reg2, reg3} {
		if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", f); code != 200 || body != "ok" {
			t.Fatalf("register %v: %d %s", f, code, body)
		}
	}
	byIP := map[string]nacoswire.Instance{}
	for _, h := range listOf(t, s, url.Values{"serviceName": {"forms"}}).Hosts {
		byIP[h.IP] = h
	}
	h1, h2 := byIP["10.0.0.1"], byIP["10.0.0.2"]
	if h1.ClusterName != "east" || h1.Weight != 0 || h1.Metadata["n"] != "1" || h1.Metadata["f"] != "1.5" ||
		h1.Metadata["b"] != "true" || h1.Metadata["s"] != "x" {
		t.Errorf("clusterName, weight 0, JSON metadata: %+v", h1)
	}
	if h2.ClusterName != "west" || h2.Healthy || h2.Metadata["k"] != "v" || h2.Metadata["k2"] != "v2" {
		t.Errorf("cluster, healthy=false, k=v metadata: %+v", h2)
	}
	for _, h := range listOf(t, s, url.Values{"serviceName": {"forms"}, "healthyOnly": {"true"}}).Hosts {
		if h.IP == "10.0.0.2" {
			t.Errorf("healthyOnly lists the unhealthy instance: %+v", h)
		}
	}
	disabled := false
	for _, u := range reg.Routes.URLs("forms", "nacos") {
		disabled = disabled || strings.Contains(u, "10.0.0.3") && strings.Contains(u, "nacos.enabled=false")
	}
	if !disabled {
		t.Errorf("enable=false not kept: %q", reg.Routes.URLs("forms", "nacos"))
	}
}

// What Nacos refuses is refused with its message, and changes nothing.
func TestHTTPParameterFormsRefused(t *testing.T) {
	s, reg := startServer(t)
	base := func(k, v string) url.Values {
		f := url.Values{"serviceName": {"refused"}, "ip": {"10.0.0.1"}, "port": {"80"}}
		if v == "" {
			f.Del(k)
		} else {
			f.Set(k, v)
		}
		return f
	}
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{base("weight", "10000.5"), "The weights range from 0.0 to 10000.0"},
		{base("weight", "-1"), "The weights range from 0.0 to 10000.0"},
		{base("weight", "heavy"), "weight"},
		{base("metadata", "a=b=c"), "metadata format incorrect:a=b=c"},
		{base("metadata", "a=,b=c"), "metadata format incorrect:a=,b=c"},
		{base("metadata", `{"a":{"b":1}}`), "metadata format incorrect"},
		{base("metadata", strings.Repeat("k=v,", MaxMetadata)), "metadata of"},
		{base("ip", ""), "Param 'ip' is required."},
		{base("port", ""), "Param 'port' is required."},
	} {
		if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", c.form); code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%.120v: %d %.200q; want 400 with %q", c.form, code, body, c.want)
		}
	}
	if n, m := reg.Routes.Len(); m != 0 {
		t.Fatalf("refused registrations changed the table: %d origins, %d records", n, m)
	}
}

// /nacos/v1/ns/operator/metrics answers status UP (the SDKs report the
// server DOWN when it fails), and the figures with onlyStatus=false.
func TestHTTPOperatorMetrics(t *testing.T) {
	s, _ := startServer(t)
	if code, body := do(t, s, "GET", "/nacos/v1/ns/operator/metrics", nil); code != 200 || strings.TrimSpace(body) != `{"status":"UP"}` {
		t.Fatalf("metrics: %d %s", code, body)
	}
	do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"m"}, "ip": {"10.0.0.1"}, "port": {"80"}})
	code, body := do(t, s, "GET", "/nacos/v1/ns/operator/metrics", url.Values{"onlyStatus": {"false"}})
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); code != 200 || err != nil || m["status"] != "UP" ||
		m["serviceCount"] != 1.0 || m["instanceCount"] != 1.0 || m["ephemeralIpPortClientCount"] != 1.0 {
		t.Fatalf("metrics with figures: %d %s", code, body)
	}
}

// Config 1.x details: the Config-Type header, a failed CAS answered as
// Nacos (500, false), a missing group refused (400) as Nacos' required
// parameter is.
func TestHTTPConfigDetails(t *testing.T) {
	s, _ := startServer(t)
	pub := url.Values{"dataId": {"app.yaml"}, "group": {"g"}, "content": {"a: 1"}, "type": {"yaml"}}
	if code, body := do(t, s, "POST", "/nacos/v1/cs/configs", pub); code != 200 || body != "true" {
		t.Fatalf("publish: %d %s", code, body)
	}
	resp := get(t, s, "/nacos/v1/cs/configs", url.Values{"dataId": {"app.yaml"}, "group": {"g"}})
	if resp.Header.Get("Config-Type") != "yaml" || resp.Header.Get("Content-MD5") != md5Hex("a: 1") {
		t.Errorf("get headers: %v", resp.Header)
	}
	pub.Set("casMd5", md5Hex("stale"))
	if code, body := do(t, s, "POST", "/nacos/v1/cs/configs", pub); code != 500 || body != "false" {
		t.Errorf("failed CAS: %d %q; want 500 false", code, body)
	}
	for _, method := range []string{"GET", "POST", "DELETE"} {
		code, body := do(t, s, method, "/nacos/v1/cs/configs", url.Values{"dataId": {"app.yaml"}, "content": {"b: 2"}})
		if code != 400 || !strings.Contains(body, "'group'") {
			t.Errorf("%s without group: %d %q; want 400 naming group", method, code, body)
		}
	}
	if code, body := do(t, s, "GET", "/nacos/v1/cs/configs", url.Values{"dataId": {"app.yaml"}, "group": {"g"}}); code != 200 || body != "a: 1" {
		t.Errorf("refused writes changed the config: %d %q", code, body)
	}
}

// get makes a GET and returns the answer (its body read and closed).
func get(t *testing.T, s *Server, path string, form url.Values) *http.Response {
	t.Helper()
	resp, err := http.Get("http://" + s.Addr() + path + "?" + form.Encode())
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// Error bodies are Nacos': naming's ResponseExceptionHandler answers the
// message as it is, config's GlobalExceptionHandler "caused: <message>;".
func TestHTTPErrorBodies(t *testing.T) {
	s, _ := startServer(t)
	if code, body := do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"x"}, "port": {"80"}}); code != 400 || body != "Param 'ip' is required." {
		t.Errorf("naming error: %d %q; want 400 \"Param 'ip' is required.\"", code, body)
	}
	if code, body := do(t, s, "POST", "/nacos/v1/cs/configs", url.Values{"dataId": {"d"}, "content": {"x"}}); code != 400 ||
		body != "caused: Required request parameter 'group' for method parameter type String is not present;" {
		t.Errorf("config error: %d %q", code, body)
	}
}

// GET /nacos/v1/ns/instance is InstanceController.detail: the instance of
// the cluster named by clusterName (DEFAULT when none), else 404 with
// Nacos' messages.
func TestHTTPInstanceDetail(t *testing.T) {
	s, _ := startServer(t)
	do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"d"}, "ip": {"10.0.0.1"}, "port": {"80"}, "clusterName": {"c1"}})
	do(t, s, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"d"}, "ip": {"10.0.0.2"}, "port": {"80"}})
	for _, c := range []struct {
		form url.Values
		code int
		want string
	}{
		{url.Values{"serviceName": {"d"}, "ip": {"10.0.0.1"}, "port": {"80"}, "clusterName": {"c1"}}, 200, `"clusterName":"c1"`},
		{url.Values{"serviceName": {"d"}, "ip": {"10.0.0.2"}, "port": {"80"}}, 200, `"clusterName":"DEFAULT"`},
		{url.Values{"serviceName": {"d"}, "ip": {"10.0.0.1"}, "port": {"80"}}, 404, "no matched ip found!"},
		{url.Values{"serviceName": {"none"}, "ip": {"10.0.0.1"}, "port": {"80"}}, 404, "no ips found for cluster DEFAULT in service DEFAULT_GROUP@@none"},
	} {
		if code, body := do(t, s, "GET", "/nacos/v1/ns/instance", c.form); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%v: %d %s; want %d with %s", c.form, code, body, c.code, c.want)
		}
	}
}
