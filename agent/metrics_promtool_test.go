package agent_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/promsink"
	"github.com/namecast/namecast/internal/testutil"
)

// promtool finds Prometheus' promtool (Debian's prometheus package), or
// skips; CI sets NAMECAST_PROMETHEUS=require (.ci/run installs it), and
// there a missing promtool fails.
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("NAMECAST_PROMETHEUS") == "require" {
			t.Fatal("NAMECAST_PROMETHEUS=require but promtool is not installed")
		}
		t.Skip("promtool not installed (NAMECAST_PROMETHEUS=require makes this fail)")
	}
	return path
}

func scrape(t *testing.T, addr string) (string, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return string(b), err
}

// /metrics follows Prometheus' conventions, as promtool check metrics
// lints them (counters end in _total, units in names, HELP on every
// series), on a cluster whose doors and gossip have counted something;
// every HELP is a description, not the series' name; and the Go runtime,
// the process and the build are there.
func TestMetricsPassPromtool(t *testing.T) {
	tool := promtool(t)
	c := agenttest.Start(t, 2)
	call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/brokers", brokerReg("b1", "10.9.0.1:10911", "PromTopic"), nil)
	registerOverNacos(t, c.Agent(0))
	var body string
	testutil.Eventually(t, 20*time.Second, func() error {
		var err error
		if body, err = scrape(t, c.Agent(0).HTTPAddr()); err != nil {
			return err
		}
		for _, want := range []string{"namecast_routes_local_changes_total ", "namecast_nacos_requests_total{",
			"namecast_http_put_seconds_count ", "go_goroutines ", "process_cpu_seconds_total ",
			`namecast_build_info{goversion="go`, "namecast_memberlist_msg_alive_total "} {
			if !strings.Contains(body, want) {
				return fmt.Errorf("no %s in /metrics", want)
			}
		}
		other, err := scrape(t, c.Agent(1).HTTPAddr())
		if err != nil {
			return err
		}
		if !strings.Contains(other, "namecast_gossip_ops_applied_total ") {
			return fmt.Errorf("no namecast_gossip_ops_applied_total on the peer")
		}
		return nil
	})
	cmd := exec.Command(tool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || out.Len() > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
	for _, m := range regexp.MustCompile(`(?m)^# HELP (\S+) (.*)$`).FindAllStringSubmatch(body, -1) {
		if m[2] == m[1] || m[2] == "" {
			t.Errorf("%s: HELP %q says nothing", m[1], m[2])
		}
	}
}

// --metrics serves GET /metrics and GET /v1/health and nothing else: no
// write, no other read of the API, whatever the Host header.
func TestMetricsListenerIsReadOnly(t *testing.T) {
	c := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.MetricsAddr = "127.0.0.1:0" })
	addr := c.Agent(0).MetricsAddr()
	if addr == "" {
		t.Fatal("no metrics listener")
	}
	body, err := scrape(t, addr)
	if err != nil || !strings.Contains(body, "namecast_build_info{") {
		t.Fatalf("GET /metrics: %v\n%.300s", err, body)
	}
	// Bound on port 0, its address is found where the doors' are.
	if raw := get(t, c.Agent(0).HTTPAddr(), "/v1/agent"); !strings.Contains(raw, `"metricsAddr":"`+addr+`"`) {
		t.Errorf("GET /v1/agent does not name the metrics listener %s: %s", addr, raw)
	}
	for _, tt := range []struct {
		method, path, host string
		status             int
	}{
		{"GET", "/v1/health", "", 200},
		{"GET", "/metrics", "prometheus.example:9090", 200},
		{"PUT", "/v1/brokers", "", 405},
		{"POST", "/v1/leave", "", 405},
		{"DELETE", "/metrics", "", 405},
		{"GET", "/v1/members", "", 404},
		{"GET", "/v1/routes/PromTopic", "", 404},
		{"GET", "/ui/", "", 404},
	} {
		req, _ := http.NewRequest(tt.method, "http://"+addr+tt.path, strings.NewReader("{}"))
		if tt.host != "" {
			req.Host = tt.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s: %s %s; want %d", tt.method, tt.path, resp.Status, b, tt.status)
		}
		if tt.path == "/v1/health" && !strings.Contains(string(b), `"node":"`+c.Agent(0).Name()+`"`) {
			t.Errorf("GET /v1/health: %s", b)
		}
	}
}

// The example alert rules pass promtool check rules, and every namecast
// series they use is one the agent exports.
func TestAlertRules(t *testing.T) {
	tool := promtool(t)
	const rules = "../contrib/prometheus/namecast-alerts.yml"
	out, err := exec.Command(tool, "check", "rules", rules).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Errorf("promtool check rules %s: %v\n%s", rules, err, out)
	}
	b, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`\bnamecast_[a-z_]+`).FindAllString(string(b), -1) {
		if !promsink.Described(name) {
			t.Errorf("%s uses %s, which no agent exports", rules, name)
		}
	}
}

// Every counter the example alert rules take a rate or an increase of is
// exported at 0 by a fresh, idle agent: a counter that first appears at 1
// has no earlier sample, so rate() and increase() never see its first
// increment and the alert would miss the first overload, bad key or flood.
func TestAlertedCountersStartAtZero(t *testing.T) {
	b, err := os.ReadFile("../contrib/prometheus/namecast-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	counters := regexp.MustCompile(`\bnamecast_[a-z_]+_total\b`).FindAllString(string(b), -1)
	if len(counters) == 0 {
		t.Fatal("no counter in the alert rules")
	}
	c := agenttest.Start(t, 1)
	body, err := scrape(t, c.Agent(0).HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range counters {
		if !regexp.MustCompile(`(?m)^` + name + `(\{[^}]*\})? 0$`).MatchString(body) {
			t.Errorf("a fresh agent does not export %s at 0", name)
		}
	}
}
