package nacos

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// listen sends a 1.x listener request with the timeout header (ms; "" for
// none) and returns its status, body and how long it took.
func listen(t *testing.T, s *Server, configs, timeout string) (int, string, time.Duration) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+s.Addr()+"/nacos/v1/cs/configs/listener",
		strings.NewReader(url.Values{"Listening-Configs": {configs}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if timeout != "" {
		req.Header.Set("Long-Pulling-Timeout", timeout)
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil { // the door closed under a poll the test left held
		return 0, err.Error(), 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), time.Since(start)
}

// A 1.x listener (Nacos' ConfigController.listener) is held until a
// listened config changes, then answered with the changed keys in Nacos'
// encoding; one whose MD5 is stale is answered at once; one for which
// nothing changes is answered empty at its timeout.
func TestHTTPConfigListener(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.ListenMinWait = time.Second })
	pub := func(dataID, content string) {
		t.Helper()
		if code, body := do(t, s, "POST", "/nacos/v1/cs/configs", url.Values{"dataId": {dataID}, "group": {"g"}, "content": {content}}); code != 200 {
			t.Fatalf("publish: %d %s", code, body)
		}
	}
	pub("a.yaml", "x: 1")
	// Held: a.yaml at its current MD5, b.yaml absent ("" as Java sends).
	held := "a.yaml\x02g\x02" + md5Hex("x: 1") + "\x01b.yaml\x02g\x02\x02ns1\x01"
	type answer struct {
		code int
		body string
		took time.Duration
	}
	got := make(chan answer, 1)
	go func() {
		c, b, d := listen(t, s, held, "30000")
		got <- answer{c, b, d}
	}()
	testutil.Eventually(t, 5*time.Second, func() error {
		if n := s.pollsHeld(); n != 1 {
			return fmt.Errorf("%d polls held", n)
		}
		return nil
	})
	if code, body := do(t, s, "POST", "/nacos/v1/cs/configs", url.Values{"dataId": {"b.yaml"}, "group": {"g"}, "tenant": {"ns1"}, "content": {"y"}}); code != 200 {
		t.Fatalf("publish b.yaml: %d %s", code, body)
	}
	a := <-got
	if a.code != 200 || a.body != "b.yaml%02g%02ns1%01\n" {
		t.Fatalf("held listener answered %d %q; want b.yaml%%02g%%02ns1%%01", a.code, a.body)
	}
	// Stale MD5: answered at once, without the tenant it did not name.
	if code, body, _ := listen(t, s, "a.yaml\x02g\x02"+md5Hex("x: 0")+"\x01", "30000"); code != 200 || body != "a.yaml%02g%01\n" {
		t.Fatalf("stale listener answered %d %q", code, body)
	}
	// Nothing changes: an empty answer after the wait (the 1 s floor).
	if code, body, took := listen(t, s, held[:strings.Index(held, "\x01")+1], "100"); code != 200 || body != "" || took < 900*time.Millisecond {
		t.Fatalf("unchanged listener answered %d %q after %v", code, body, took)
	}
	// Short polling (no timeout header): answered at once.
	if code, body, took := listen(t, s, held[:strings.Index(held, "\x01")+1], ""); code != 200 || body != "" || took >= 900*time.Millisecond {
		t.Fatalf("short poll answered %d %q after %v", code, body, took)
	}
	if n := s.pollsHeld(); n != 0 {
		t.Fatalf("%d polls still held", n)
	}
}

// Malformed listener requests are refused (400, Nacos' "invalid
// probeModify"); past Config.MaxListeners a poll is refused with 503,
// and the polls held are not disturbed.
func TestHTTPConfigListenerBounds(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.MaxListeners = 1; c.ListenMinWait = 20 * time.Second })
	for _, bad := range []string{"", "a\x02b\x01", "a\x02g\x02m\x02t\x02x\x01", "a/b\x02g\x02m\x01"} {
		if code, body, _ := listen(t, s, bad, "30000"); code != 400 || !strings.Contains(body, "probeModify") {
			t.Errorf("%q: %d %q; want 400 invalid probeModify", bad, code, body)
		}
	}
	go listen(t, s, "a\x02g\x02\x01", "30000")
	testutil.Eventually(t, 5*time.Second, func() error {
		if n := s.pollsHeld(); n != 1 {
			return fmt.Errorf("%d polls held", n)
		}
		return nil
	})
	if code, body, _ := listen(t, s, "b\x02g\x02\x01", "30000"); code != 503 || !strings.Contains(body, "too many config listeners") {
		t.Fatalf("over the limit: %d %q; want 503", code, body)
	}
	if n := s.pollsHeld(); n != 1 {
		t.Fatalf("the refused poll disturbed the held one: %d held", n)
	}
}
