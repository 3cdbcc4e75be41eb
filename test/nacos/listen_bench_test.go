package nacos

import (
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/nacos"
)

// BenchmarkHTTP1xListenAcrossAgents is the figure for 1.x
// config listening: a config published through agent 0 of 10 (the lan
// profile, as TestFigures' gRPC push figure), how long until a 1.x
// listener held on agent 9 is answered. Run it as
//
//	go test -run '^$' -bench HTTP1xListenAcrossAgents -benchtime 10x .
//
// and read p50-ms and p99-ms (N is -benchtime's count).
func BenchmarkHTTP1xListenAcrossAgents(b *testing.B) {
	c := agenttest.Start(b, 10, agenttest.WithProfile("lan"))
	doors := make([]*nacos.Server, 10)
	for i := range doors {
		s, err := nacos.NewServer(nacos.Config{Addr: "127.0.0.1:0", Host: c.Agent(i).Host(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		doors[i] = s
	}
	pub, sub := doors[0], doors[9]
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		dataID := fmt.Sprintf("bench-%d-%d.properties", b.N, i)
		got := make(chan time.Time, 1)
		go func() {
			call1x(b, sub, "POST", "/nacos/v1/cs/configs/listener",
				url.Values{"Listening-Configs": {listening(dataID, "DEFAULT_GROUP", "")}}, "Long-Pulling-Timeout", "30000")
			got <- time.Now()
		}()
		heldListeners(b, sub, 1)
		start := time.Now()
		if code, body := call1x(b, pub, "POST", "/nacos/v1/cs/configs",
			url.Values{"dataId": {dataID}, "group": {"DEFAULT_GROUP"}, "content": {"v"}}); code != 200 {
			b.Fatalf("publish: %d %s", code, body)
		}
		select {
		case at := <-got:
			took = append(took, at.Sub(start))
		case <-time.After(30 * time.Second):
			b.Fatal("the listener on agent 9 was not answered within 30 s")
		}
	}
	b.StopTimer()
	slices.Sort(took)
	q := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
