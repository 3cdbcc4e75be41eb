package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/namecast/namecast/routes"
)

// BenchmarkWatchWakeups is the figure of per-view blocking queries (issue
// 13): 1,000 watches over HTTP on distinct topics and services of one
// agent while 100 unrelated changes a second arrive, for
// watchWindow. It reports wake-ups per watch per second and the process's
// CPU (agent and watchers, one process) per second, with every query on
// the table's global index ("global", as before) and on its own view
// ("per-view"). Run once:
//
//	go test -run '^$' -bench WatchWakeups -benchtime 1x ./agent/
func BenchmarkWatchWakeups(b *testing.B) {
	for _, mode := range []struct {
		name   string
		global bool
	}{{"global", true}, {"per-view", false}} {
		b.Run(mode.name, func(b *testing.B) {
			for range b.N {
				wakeups, cpu := watchScenario(b, mode.global)
				b.ReportMetric(wakeups, "wakeups/watch/s")
				b.ReportMetric(cpu, "cpu-s/s")
			}
		})
	}
}

const (
	watchCount   = 1000
	watchChanges = 100 // per second
	watchWindow  = 5 * time.Second
)

func watchScenario(b *testing.B, global bool) (wakeupsPerWatchSec, cpuPerSec float64) {
	a := startLone(b)
	a.globalWatches.Store(global)
	// Half the watches on topics, half on services. The records are the
	// agent's own: a lone agent drops a peer's records, whose origin is
	// not a live member, within an anti-entropy interval.
	var recs []routes.Record
	paths := make([]string, 0, watchCount)
	for i := range watchCount / 2 {
		topic, iface := fmt.Sprintf("Watched%d", i), fmt.Sprintf("com.watched.S%d", i)
		recs = append(recs,
			routes.Record{Broker: &routes.Broker{Cluster: "c", Name: "wb" + strconv.Itoa(i), Addr: "10.1.0.1:10911"}},
			routes.Record{Queue: &routes.Queue{Topic: topic, BrokerName: "wb" + strconv.Itoa(i), ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
			routes.Record{URL: &routes.URL{Interface: iface, Category: "providers", URL: "dubbo://10.1.0.2:20880/" + iface}})
		paths = append(paths, "/v1/topics/"+topic, "/v1/services/"+iface)
	}
	a.table.ApplyLocal(recs, nil)

	ctx, cancel := context.WithCancel(context.Background())
	tr := &http.Transport{MaxIdleConnsPerHost: watchCount, MaxConnsPerHost: 0}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var wakeups atomic.Int64
	var counting atomic.Bool
	var wg sync.WaitGroup
	ready := make(chan struct{}, watchCount)
	for _, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			watchLoop(ctx, hc, "http://"+a.Addr()+p, ready, func() {
				if counting.Load() {
					wakeups.Add(1)
				}
			})
		}()
	}
	for range paths {
		<-ready
	}
	// Unrelated changes: other URLs come and go, through the same write
	// path (the table's lock, view links, index bump) as a peer's ops.
	counting.Store(true)
	cpu0 := cpuTime()
	start := time.Now()
	tick := time.NewTicker(time.Second / watchChanges)
	for i := 0; time.Since(start) < watchWindow; i++ {
		<-tick.C
		u := routes.Record{URL: &routes.URL{Interface: fmt.Sprintf("com.unrelated.S%d", i%50), Category: "providers",
			URL: fmt.Sprintf("dubbo://10.2.%d.%d:20880/x", i/250%250, i%250)}}
		if i%2 == 0 {
			a.table.ApplyLocal([]routes.Record{u}, nil)
		} else {
			prev := routes.Record{URL: &routes.URL{Interface: fmt.Sprintf("com.unrelated.S%d", (i-1)%50), Category: "providers",
				URL: fmt.Sprintf("dubbo://10.2.%d.%d:20880/x", (i-1)/250%250, (i-1)%250)}}
			a.table.ApplyLocal(nil, []string{prev.Key()})
		}
	}
	tick.Stop()
	elapsed := time.Since(start).Seconds()
	cpu := (cpuTime() - cpu0).Seconds()
	counting.Store(false)
	cancel()
	wg.Wait()
	return float64(wakeups.Load()) / watchCount / elapsed, cpu / elapsed
}

// watchLoop follows one path with blocking queries, as client watches do,
// calling woke each time a blocking query returns.
func watchLoop(ctx context.Context, hc *http.Client, url string, ready chan<- struct{}, woke func()) {
	index := "0"
	first := true
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"?wait=1m&index="+index, nil)
		resp, err := hc.Do(req)
		if err != nil {
			if first {
				ready <- struct{}{}
			}
			return
		}
		resp.Body.Close()
		index = resp.Header.Get(indexHeader)
		if first {
			first = false
			ready <- struct{}{}
			continue
		}
		woke()
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
