package agent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// TestTenThousandRegistrations submits 10,000 URL registrations to one
// agent of five as fast as 16 keep-alive clients can, and waits until every
// agent serves all of them; it logs how long each part took.
//
// The agents detect failures at LAN speed, not agenttest's FastFailure (a
// 100 ms ping timeout): this test measures registration and convergence,
// and on a busy 2-core machine under -race FastFailure declares members
// dead every few seconds. Each false death of agent-0 drops its 10,000 records on the
// member that declared it, which then pulls them all again, so some agent
// was always mid-pull (the origin's seq, part of its records: the same seq
// with another hash) or had just dropped them, and the wait ran out three
// runs in three.
func TestTenThousandRegistrations(t *testing.T) {
	if testing.Short() {
		t.Skip("load test: skipped with -short")
	}
	testutil.CheckLeaks(t)
	const n, workers, ifaces = 10000, 16, 100
	c := agenttest.Start(t, 5, agenttest.WithProfile("lan"))
	a0 := c.Agent(0)
	tr := &http.Transport{MaxIdleConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	start := time.Now()
	jobs := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := putURL(client, a0.HTTPAddr(), loadURL(i, ifaces)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range n {
		select {
		case jobs <- i:
		case err := <-errs:
			t.Fatal(err)
		}
	}
	close(jobs)
	wg.Wait()
	submitted := time.Since(start)

	want := a0.Table().Digest()[a0.Name()]
	testutil.Eventually(t, 2*time.Minute, func() error {
		for _, i := range c.Running() {
			if got := c.Agent(i).Table().Digest()[a0.Name()]; got != want {
				return fmt.Errorf("agent-%d holds %+v of agent-0, want %+v", i, got, want)
			}
		}
		return nil
	})
	visible := time.Since(start)
	for _, i := range c.Running() {
		total := 0
		for k := range ifaces {
			total += len(c.Agent(i).Table().URLs(fmt.Sprintf("com.load.Svc%d", k), "providers"))
		}
		if total != n {
			t.Errorf("agent-%d serves %d URLs, want %d", i, total, n)
		}
	}
	var queued []int
	for _, i := range c.Running() {
		queued = append(queued, c.Agent(i).Gossip().QueuedBroadcasts())
	}
	t.Logf("%d registrations: submitted in %v (%.0f/s), visible on all 5 agents %v after the first, %v after the last; broadcasts still queued per agent %v",
		n, submitted.Round(time.Millisecond), float64(n)/submitted.Seconds(), visible.Round(time.Millisecond),
		(visible - submitted).Round(time.Millisecond), queued)
}

func loadURL(i, ifaces int) string {
	return fmt.Sprintf("dubbo://10.%d.%d.%d:20880/com.load.Svc%d?side=provider&version=1", i>>16&255, i>>8&255, i&255, i%ifaces)
}

func putURL(client *http.Client, addr, u string) error {
	b, _ := json.Marshal(map[string]string{"url": u})
	req, _ := http.NewRequest("PUT", "http://"+addr+"/v1/urls", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PUT %s: %d %s", u, resp.StatusCode, body)
	}
	return nil
}
