package agent_test

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// TestThousandBlockingQueries opens 1,000 blocking queries on one agent,
// each on its own keep-alive connection, and checks that the agent still
// answers an ordinary GET promptly while they wait, and that one change
// returns all of them.
func TestThousandBlockingQueries(t *testing.T) {
	testutil.CheckLeaks(t)
	const n = 1000
	c := agenttest.Start(t, 1)
	addr := c.Agent(0).HTTPAddr()
	_, h := call(t, "GET", addr, "/v1/topics", nil, &map[string]any{})
	index, _ := strconv.ParseUint(h.Get("X-Namecast-Index"), 10, 64)

	tr := &http.Transport{MaxIdleConnsPerHost: n, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var written sync.WaitGroup
	written.Add(n)
	type result struct {
		index uint64
		err   error
	}
	results := make(chan result, n)
	for range n {
		go func() {
			trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { written.Done() }}
			req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/v1/topics?index=%d&wait=2m", addr, index), nil)
			resp, err := client.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
			if err != nil {
				results <- result{err: err}
				return
			}
			resp.Body.Close()
			i, err := strconv.ParseUint(resp.Header.Get("X-Namecast-Index"), 10, 64)
			results <- result{i, err}
		}()
	}
	waitGroup(t, &written, time.Minute, "1,000 blocking queries to be sent")

	// Every query is parked on the index; the agent must still serve.
	start := time.Now()
	if status, _ := call(t, "GET", addr, "/v1/health", nil, &map[string]any{}); status != http.StatusOK {
		t.Fatalf("health with %d queries waiting: %d", n, status)
	}
	plain := time.Since(start)
	if plain > 2*time.Second {
		t.Errorf("a plain GET took %v with %d blocking queries open", plain, n)
	}
	select {
	case r := <-results:
		t.Fatalf("a blocking query returned before any change: %+v", r)
	default:
	}

	changed := time.Now()
	call(t, "PUT", addr, "/v1/brokers", brokerReg("wake", "10.8.0.1:10911", "Wake"), nil)
	var slowest time.Duration
	for i := range n {
		select {
		case r := <-results:
			if r.err != nil || r.index <= index {
				t.Fatalf("blocking query %d: index %d (was %d), err %v", i, r.index, index, r.err)
			}
			slowest = time.Since(changed)
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of %d blocking queries returned within 30s of the change", i, n)
		}
	}
	t.Logf("a GET answered in %v beside %d blocking queries; all %d returned within %v of the change",
		plain.Round(time.Microsecond), n, n, slowest.Round(time.Millisecond))
}

// waitGroup waits for wg, failing the test after timeout.
func waitGroup(t *testing.T, wg *sync.WaitGroup, timeout time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}
