package client

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/internal/testutil"
)

// recorder is a NotifyListener that keeps every notification and notices
// overlapping calls.
type recorder struct {
	mu       sync.Mutex
	calls    [][]string
	inside   atomic.Int32
	overlaps atomic.Int32
	hook     func([]string) // runs inside Notify, if set
}

func (r *recorder) Notify(urls []string) {
	if r.inside.Add(1) > 1 {
		r.overlaps.Add(1)
	}
	defer r.inside.Add(-1)
	if r.hook != nil {
		r.hook(urls)
	}
	r.mu.Lock()
	r.calls = append(r.calls, urls)
	r.mu.Unlock()
}

func (r *recorder) all() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// stream names the interface and category a notification is for.
func stream(urls []string) string {
	u := dubbo.MustParse(urls[0])
	return u.Interface() + " " + u.Category()
}

// last is the latest notification for iface and category, nil if none.
func (r *recorder) last(iface, category string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.calls) - 1; i >= 0; i-- {
		if stream(r.calls[i]) == iface+" "+category {
			return r.calls[i]
		}
	}
	return nil
}

// waitFor waits until the latest notification for iface and category is
// want.
func (r *recorder) waitFor(t *testing.T, timeout time.Duration, iface, category string, want ...string) {
	t.Helper()
	testutil.Eventually(t, timeout, func() error {
		if got := r.last(iface, category); !slices.Equal(got, want) {
			return fmt.Errorf("last %s %s notification is %q, want %q", iface, category, got, want)
		}
		return nil
	})
}

// checkContract fails t if any notification broke the per-call rules:
// never empty, one category, and an empty:// URL only alone.
func checkContract(t *testing.T, calls [][]string) {
	t.Helper()
	for i, urls := range calls {
		if len(urls) == 0 {
			t.Errorf("notification %d is empty", i)
			continue
		}
		for _, s := range urls {
			u := dubbo.MustParse(s)
			if stream([]string{s}) != stream(urls) {
				t.Errorf("notification %d mixes streams: %q", i, urls)
			}
			if u.Protocol() == dubbo.EmptyProtocol && len(urls) != 1 {
				t.Errorf("notification %d has empty:// beside other URLs: %q", i, urls)
			}
		}
	}
}

func empty(sub, category string) string {
	return dubbo.Empty(dubbo.MustParse(sub), category).String()
}

func canon(s string) string { return dubbo.MustParse(s).String() }

// testLogger is l, or with NAMECAST_TEST_LOG set (as for the agents of
// agenttest) a debug log on stderr.
func testLogger(l *slog.Logger) *slog.Logger {
	if l == nil && os.Getenv("NAMECAST_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return l
}
