package zookeeper

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// syncBuf is a bytes.Buffer safe for a logger and a test at once.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A recipe the door cannot serve does not spin (issue 41 item 6: Curator's
// LeaderSelector with autoRequeue made 36,962 refused sequential creates
// in 5 s, nothing logged at WARN): a session's refusals are answered one
// per RefusalPace, the first at once; the first of each kind is logged at
// WARN with what and why, once per session; every one is counted; and the
// session's other requests are still answered meanwhile.
func TestRefusedRecipesArePacedLoggedAndCounted(t *testing.T) {
	var logs syncBuf
	const pace = 100 * time.Millisecond
	s, _ := startServer(t, func(c *Config) {
		c.RefusalPace = pace
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	})
	r := dialRaw(t, s)
	r.handshake(false)
	mkdirs(t, r, "/leader")
	start := time.Now()
	n := 0
	for xid := int32(1); time.Since(start) < time.Second; xid++ {
		h, _, _ := r.call(xid, zkwire.OpCreate, &zkwire.CreateRequest{Path: "/leader/lock-", ACL: openACL, Flags: zkwire.FlagEphemeralSequential})
		if h.Err != zkwire.ErrUnimplemented {
			t.Fatalf("sequential create: %d, want UNIMPLEMENTED", h.Err)
		}
		n++
		if n == 1 && time.Since(start) > pace/2 {
			t.Fatalf("the first refusal took %v", time.Since(start))
		}
		if h, _, _ := r.call(-2, zkwire.OpPing, nil); h.Err != 0 {
			t.Fatalf("ping between refusals: %d", h.Err)
		}
	}
	if max := int(time.Second/pace) + 2; n > max {
		t.Fatalf("%d refused creates answered in 1 s, want at most %d (one per %v)", n, max, pace)
	}
	if h, _, _ := r.call(1000, zkwire.OpCreate, &zkwire.CreateRequest{Path: "/t", ACL: openACL, Flags: zkwire.FlagPersistentTTL}); h.Err != zkwire.ErrUnimplemented {
		t.Fatalf("TTL create: %d", h.Err)
	}
	out := logs.String()
	if c := strings.Count(out, "sequential create refused"); c != 1 {
		t.Fatalf("%d WARN lines about the sequential creates, want 1:\n%s", c, out)
	}
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "LeaderSelector") || strings.Count(out, "TTL create refused") != 1 {
		t.Fatalf("the WARN lines do not say what was refused and why:\n%s", out)
	}
	got := s.stats.meter.Count("refused", metrics.Label{Name: "what", Value: "sequential create"})
	if got != uint64(n) {
		t.Fatalf("refused sequential creates counted %d, want %d", got, n)
	}
}
