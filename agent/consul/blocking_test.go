package consul

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// A blocking health query answers when the service changes, with a
// higher X-Consul-Index; one on an unrelated service keeps waiting.
func TestBlockingHealthQuery(t *testing.T) {
	d := newDoor(t)
	h := d.ok("GET", "/v1/health/service/web", nil, nil)
	idx := h.Get("X-Consul-Index")
	if idx == "" || idx == "0" || h.Get("X-Consul-KnownLeader") != "true" || h.Get("X-Consul-LastContact") != "0" {
		t.Fatalf("headers: %v", h)
	}
	type answer struct {
		code  int
		index string
		body  string
	}
	got := make(chan answer, 1)
	go func() {
		code, h, b := d.call("GET", "/v1/health/service/web?index="+idx+"&wait=30s", nil)
		got <- answer{code, h.Get("X-Consul-Index"), string(b)}
	}()
	other := make(chan answer, 1)
	go func() {
		_, oh, _ := d.call("GET", "/v1/health/service/other", nil)
		code, h, b := d.call("GET", "/v1/health/service/other?index="+oh.Get("X-Consul-Index")+"&wait=300ms", nil)
		other <- answer{code, h.Get("X-Consul-Index"), string(b)}
	}()
	select {
	case a := <-got:
		t.Fatalf("answered before any change: %+v", a)
	case <-time.After(50 * time.Millisecond):
	}
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"Name": "web", "Port": 80}, nil)
	select {
	case a := <-got:
		n, _ := strconv.ParseUint(a.index, 10, 64)
		before, _ := strconv.ParseUint(idx, 10, 64)
		if a.code != http.StatusOK || n <= before || !contains([]byte(a.body), `"Service":"web"`) {
			t.Fatalf("blocking answer: %+v (index before %d)", a, before)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocking query not answered within 10s of the registration")
	}
	a := <-other
	if a.code != http.StatusOK || a.body != "[]" {
		t.Errorf("unrelated query: %+v", a)
	}
}

// An index above ours (another agent's) answers at once, so the client
// starts again from ours; ?wait bounds the wait.
func TestBlockingIndexAboveOursAnswersAtOnce(t *testing.T) {
	d := newDoor(t)
	start := time.Now()
	code, h, _ := d.call("GET", "/v1/catalog/services?index=999999999&wait=5s", nil)
	if code != 200 || time.Since(start) > 2*time.Second || h.Get("X-Consul-Index") == "999999999" {
		t.Fatalf("index above ours: %d after %v, index %s", code, time.Since(start), h.Get("X-Consul-Index"))
	}
}

// A blocking KV query on a missing key answers when it is written.
func TestBlockingKVOnMissingKey(t *testing.T) {
	d := newDoor(t)
	code, h, _ := d.call("GET", "/v1/kv/feature", nil)
	if code != 404 {
		t.Fatalf("missing: %d", code)
	}
	got := make(chan int, 1)
	go func() {
		code, _, _ := d.call("GET", "/v1/kv/feature?index="+h.Get("X-Consul-Index")+"&wait=30s", nil)
		got <- code
	}()
	d.ok("PUT", "/v1/agent/service/register", map[string]any{"Name": "unrelated"}, nil)
	select {
	case c := <-got:
		t.Fatalf("answered %d on an unrelated change", c)
	case <-time.After(50 * time.Millisecond):
	}
	d.ok("PUT", "/v1/kv/feature", "on", nil)
	select {
	case c := <-got:
		if c != 200 {
			t.Fatalf("after the write: %d", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("blocking KV query not answered")
	}
}
