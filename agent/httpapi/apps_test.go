package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func doJSON(t *testing.T, method, url, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: %d %s: not a JSON object", method, url, res.StatusCode, b)
	}
	return res.StatusCode, out, res.Header
}

// The application endpoints: register over HTTP, read the list and the
// application, block on the application until it changes, unregister;
// bad input answers 400 and changes nothing.
func TestAppsOverHTTP(t *testing.T) {
	s := startLone(t)
	base := "http://" + s.Addr()
	if code, out, _ := doJSON(t, "GET", base+"/v1/apps", ""); code != 200 || len(out["apps"].([]any)) != 0 {
		t.Fatalf("empty list: %d %v", code, out)
	}
	if code, _, _ := doJSON(t, "GET", base+"/v1/apps/greeter", ""); code != 404 {
		t.Fatalf("an unknown application answered %d", code)
	}
	_, _, hdr := doJSON(t, "GET", base+"/v1/apps/greeter", "")
	idx := hdr.Get(indexHeader)

	// A blocking query on the application returns when it is registered.
	type answer struct {
		code int
		out  map[string]any
	}
	woke := make(chan answer, 1)
	go func() {
		// The registration is two changes (the mapping and metadata, then
		// the instance): the first may wake the query with no instance yet,
		// so follow the index as a client does.
		for range 5 {
			code, out, hdr := doJSON(t, "GET", base+"/v1/apps/greeter?index="+idx+"&wait=30s", "")
			if code != 200 || len(out["instances"].([]any)) > 0 {
				woke <- answer{code, out}
				return
			}
			idx = hdr.Get(indexHeader)
		}
		woke <- answer{0, nil}
	}()
	code, out, _ := doJSON(t, "PUT", base+"/v1/apps/greeter/instances",
		`{"address":"10.0.0.1","port":20000,"interfaces":["org.demo.Greeter"],"metadata":{"k":"v"},"ttl":"1m"}`)
	if code != 200 || out["id"] != "10.0.0.1:20000" || out["agent"] != "lone" || out["revision"] == "" {
		t.Fatalf("PUT: %d %v", code, out)
	}
	select {
	case a := <-woke:
		if a.code != 200 || len(a.out["instances"].([]any)) != 1 {
			t.Fatalf("the blocking query answered %d %v", a.code, a.out)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking query on the application did not return when it was registered")
	}
	code, out, _ = doJSON(t, "GET", base+"/v1/apps", "")
	apps := out["apps"].([]any)
	if code != 200 || len(apps) != 1 {
		t.Fatalf("list: %d %v", code, out)
	}
	if a := apps[0].(map[string]any); a["name"] != "greeter" || a["instances"] != 1.0 || a["interfaces"].([]any)[0] != "org.demo.Greeter" {
		t.Fatalf("list entry %v", a)
	}
	code, out, _ = doJSON(t, "GET", base+"/v1/apps/greeter", "")
	in := out["instances"].([]any)[0].(map[string]any)
	if code != 200 || in["address"] != "10.0.0.1" || in["port"] != 20000.0 || in["metadata"].(map[string]any)["k"] != "v" {
		t.Fatalf("detail: %d %v", code, out)
	}
	if code, out, _ = doJSON(t, "GET", base+"/v1/services/org.demo.Greeter/apps", ""); code != 200 || out["apps"].([]any)[0] != "greeter" {
		t.Fatalf("the interface's applications: %d %v", code, out)
	}

	before := s.table.Index()
	for _, body := range []string{
		`{"address":"10.0.0.1","port":0}`,
		`{"address":"","port":1}`,
		`{"address":"10.0.0.1","port":1,"ttl":"forever"}`,
		`{"address":"10.0.0.1","port":1,"interfaces":["a/b"]}`,
		`{"address":"10.0.0.1","port":1,"app":"other"}`,
		`not json`,
	} {
		if code, out, _ := doJSON(t, "PUT", base+"/v1/apps/greeter/instances", body); code != 400 || out["error"] == nil {
			t.Errorf("PUT %s: %d %v, want 400 with an error", body, code, out)
		}
	}
	if code, _, _ := doJSON(t, "PUT", base+"/v1/apps/bad%2Fname/instances", `{"address":"10.0.0.1","port":1}`); code != 400 {
		t.Errorf("an application name with '/': %d", code)
	}
	if s.table.Index() != before {
		t.Fatal("bad registrations changed the table")
	}

	if code, _, _ := doJSON(t, "DELETE", base+"/v1/apps/greeter/instances/10.0.0.1:20000", ""); code != 200 {
		t.Fatalf("DELETE answered %d", code)
	}
	if code, _, _ := doJSON(t, "DELETE", base+"/v1/apps/greeter/instances/10.0.0.1:20000", ""); code != 404 {
		t.Fatalf("a second DELETE answered %d", code)
	}
	code, out, hdr = doJSON(t, "GET", base+"/v1/apps/greeter", "")
	if code != 200 || len(out["instances"].([]any)) != 0 {
		t.Fatalf("after DELETE (the mapping stays, so 200 with no instance): %d %v", code, out)
	}
	if _, err := strconv.ParseUint(hdr.Get(indexHeader), 10, 64); err != nil {
		t.Fatalf("index header %q", hdr.Get(indexHeader))
	}
}
