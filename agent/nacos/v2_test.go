package nacos

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// v2 calls a v2 endpoint and decodes Nacos' Result shape.
func v2(t *testing.T, s *Server, method, path string, form url.Values, hdr ...string) (int, v2Result, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+s.Addr()+path+"?"+form.Encode(), nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw json.RawMessage
	json.NewDecoder(resp.Body).Decode(&raw)
	var r v2Result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s %s: %d %s is not Nacos' Result", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, r, string(raw)
}

// The v2 open API serves Nacos' {"code":0,"message":"success","data":...}
// and its error shapes (status, ErrorCode, its text, the reason).
func TestV2OpenAPI(t *testing.T) {
	s, _ := startServer(t)
	inst := url.Values{"serviceName": {"svc"}, "groupName": {"g1"}, "ip": {"10.0.0.1"}, "port": {"80"}, "metadata": {`{"a":"1"}`}}
	ok := func(method, path string, form url.Values, want any) v2Result {
		t.Helper()
		code, r, raw := v2(t, s, method, path, form)
		if code != 200 || r.Code != 0 || r.Message != "success" || (want != nil && r.Data != want) {
			t.Fatalf("%s %s: %d %s; want 200 success %v", method, path, code, raw, want)
		}
		return r
	}
	ok("POST", "/nacos/v2/ns/instance", inst, "ok")
	list := ok("GET", "/nacos/v2/ns/instance/list", url.Values{"serviceName": {"svc"}, "groupName": {"g1"}}, nil)
	if d := list.Data.(map[string]any); d["name"] != "g1@@svc" || len(d["hosts"].([]any)) != 1 {
		t.Fatalf("list data %v", d)
	}
	sl := ok("GET", "/nacos/v2/ns/service/list", url.Values{"groupName": {"g1"}}, nil)
	if d := sl.Data.(map[string]any); d["count"] != 1.0 || len(d["services"].([]any)) != 1 {
		t.Fatalf("service list data %v", d)
	}
	upd := url.Values{"serviceName": {"svc"}, "groupName": {"g1"}, "ip": {"10.0.0.1"}, "port": {"80"}, "weight": {"2"}}
	ok("PUT", "/nacos/v2/ns/instance", upd, "ok")
	det := ok("GET", "/nacos/v2/ns/instance", url.Values{"serviceName": {"svc"}, "groupName": {"g1"}, "ip": {"10.0.0.1"}, "port": {"80"}}, nil)
	if d := det.Data.(map[string]any); d["weight"] != 2.0 || d["metadata"].(map[string]any)["a"] != "1" {
		t.Fatalf("detail after update %v", d)
	}
	ok("GET", "/nacos/v2/ns/operator/metrics", nil, nil)
	cfg := url.Values{"dataId": {"d"}, "group": {"g"}}
	pub := url.Values{"dataId": {"d"}, "group": {"g"}, "content": {"v1"}}
	ok("POST", "/nacos/v2/cs/config", pub, true)
	ok("GET", "/nacos/v2/cs/config", cfg, "v1")
	for _, c := range []struct {
		method, path string
		form         url.Values
		hdr          []string
		status, code int
		data         string
	}{
		{"POST", "/nacos/v2/ns/instance", url.Values{"serviceName": {"svc"}, "port": {"80"}}, nil, 400, 10000, "'ip'"},
		{"POST", "/nacos/v2/ns/instance", url.Values{"serviceName": {"svc"}, "ip": {"10.0.0.2"}, "port": {"80"}, "weight": {"20000"}}, nil, 400, 21001, "weights range"},
		{"POST", "/nacos/v2/ns/instance", url.Values{"serviceName": {"svc"}, "ip": {"10.0.0.2"}, "port": {"80"}, "metadata": {"x"}}, nil, 400, 21002, "metadata format"},
		{"PUT", "/nacos/v2/ns/instance", url.Values{"serviceName": {"nosuch"}, "ip": {"10.0.0.2"}, "port": {"80"}}, nil, 400, 21004, "service not found"},
		{"GET", "/nacos/v2/ns/instance/list", url.Values{}, nil, 400, 10000, "'serviceName'"},
		{"GET", "/nacos/v2/cs/config", url.Values{"dataId": {"nosuch"}, "group": {"g"}}, nil, 404, 20004, "config data not exist"},
		{"GET", "/nacos/v2/cs/config", url.Values{"dataId": {"d"}}, nil, 400, 10000, "'group'"},
		{"POST", "/nacos/v2/cs/config", pub, []string{"casMd5", md5Hex("stale")}, 500, 20005, "Cas publish fail"},
	} {
		code, r, raw := v2(t, s, c.method, c.path, c.form, c.hdr...)
		if code != c.status || r.Code != c.code || r.Message != v2Codes[c.code] || !strings.Contains(r.Data.(string), c.data) {
			t.Errorf("%s %s %v: %d %s; want %d code %d with %q", c.method, c.path, c.form, code, raw, c.status, c.code, c.data)
		}
	}
	ok("DELETE", "/nacos/v2/cs/config", cfg, true)
	ok("DELETE", "/nacos/v2/ns/instance", inst, "ok")
	if l := ok("GET", "/nacos/v2/ns/instance/list", url.Values{"serviceName": {"svc"}, "groupName": {"g1"}}, nil); len(l.Data.(map[string]any)["hosts"].([]any)) != 0 {
		t.Fatalf("after DELETE: %v", l.Data)
	}
}
