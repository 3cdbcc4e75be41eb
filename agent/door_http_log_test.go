package agent

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/namecast/namecast/internal/testutil"
)

// The web UI's address is logged once at start (it was logged twice: by
// the HTTP door as it set up its routes, and by the agent once it served).
func TestWebUIAddressLoggedOnce(t *testing.T) {
	var logs testutil.Buffer
	a := startLone(t, func(cfg *Config) { cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	out := logs.String()
	if n := strings.Count(out, `msg="web UI"`); n != 1 {
		t.Fatalf("web UI logged %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "url=http://"+a.HTTPAddr()+"/ui/") {
		t.Fatalf("the log does not name the UI at %s:\n%s", a.HTTPAddr(), out)
	}
}
