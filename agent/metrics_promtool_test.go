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

	"github.com/namecast/namecast/agent/agenttest"
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
