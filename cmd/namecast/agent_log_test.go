package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runAgentChild runs `namecast agent ARGS` as a child (the test binary,
// see TestMain) until it exits, and returns its exit code and stderr.
func runAgentChild(t *testing.T, args ...string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), agentChildEnv+"="+strings.Join(args, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stderr.String()
}

// With --log-format json every line the agent writes is one JSON object,
// down to why a start failed; and every line after the failure names the
// cause first, in either format.
func TestFailedStartLogsTheCauseFirst(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// The --metrics listener is bound after the doors serve (a door's
	// taken port fails the start before any door serves).
	const cause = "metrics port "
	args := []string{"--dev", "--node", "logs", "--bind", freeAddr(t), "--http", "127.0.0.1:0",
		"--rocketmq", "127.0.0.1:0", "--nacos", "off", "--consul", "off", "--dns", "off", "--zookeeper", "off", "--metrics", taken.Addr().String()}

	code, out := runAgentChild(t, append(args, "--log-format", "json")...)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	var errors int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec struct{ Level, Msg, Door string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("not a JSON line: %q (%v)", line, err)
			continue
		}
		if rec.Level == "ERROR" {
			errors++
			if !strings.HasPrefix(rec.Msg, cause) || !strings.Contains(rec.Msg, "address already in use") {
				t.Errorf("error line %q does not start with the cause %q", line, cause)
			}
		}
		if rec.Msg == "door listening" && rec.Door != "rocketmq" && rec.Door != "http" {
			t.Errorf("listening line %q: want door=rocketmq or door=http", line)
		}
	}
	if errors == 0 {
		t.Errorf("no ERROR line naming the cause:\n%s", out)
	}

	code, out = runAgentChild(t, args...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if code != 1 || !strings.HasPrefix(last, "namecast agent: "+cause) {
		t.Errorf("text: exit %d, last line %q; want namecast agent: %s...", code, last, cause)
	}
	for _, line := range lines {
		if strings.Contains(line, "level=ERROR") && !strings.Contains(line, `msg="`+cause) {
			t.Errorf("text error line %q does not start with the cause", line)
		}
		if strings.Contains(line, "agent stopped") {
			t.Errorf("line %q says the agent stopped without why", line)
		}
	}
	if !strings.Contains(out, `msg="door listening" `) || !strings.Contains(out, "door=rocketmq") {
		t.Errorf("no door listening line for RocketMQ:\n%s", out)
	}

	if code, out := runAgentChild(t, "--log-format", "xml"); code != 2 || !strings.Contains(out, `--log-format "xml": use text or json`) {
		t.Errorf("--log-format xml: exit %d, %s", code, out)
	}
}

// A duration in a JSON log line reads as it does in a text line ("1.5s"),
// not as slog's default, a count of nanoseconds (1500000000) that nobody
// reading "retry-join failed; will try again" in=... can take in.
func TestJSONLogDurationsAreReadable(t *testing.T) {
	var buf bytes.Buffer
	logging{json: true}.logger(&buf).Info("retry", "in", 1500*time.Millisecond)
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("%q: %v", buf.String(), err)
	}
	if rec["in"] != "1.5s" {
		t.Errorf("in = %v (%T); want \"1.5s\": %s", rec["in"], rec["in"], buf.String())
	}
}
