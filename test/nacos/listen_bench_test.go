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
	doors := lanDoors(b)
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
	reportPercentiles(b, took)
}

// lanDoors starts 10 agents (the lan profile) and a Nacos door on each.
func lanDoors(b *testing.B) []*nacos.Server {
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
	return doors
}

func reportPercentiles(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	q := func(p float64) float64 {
		return float64(took[min(len(took)-1, int(p*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkHTTP1xUpdateAcrossAgents: an operator's PUT through agent 0 of
// 10 (lan) alternating an instance's weight between 0 and 1, how long
// until agent 9's 1.x list shows it (polled each millisecond). Run as
//
//	go test -run '^$' -bench HTTP1xUpdateAcrossAgents -benchtime 10x .
func BenchmarkHTTP1xUpdateAcrossAgents(b *testing.B) {
	doors := lanDoors(b)
	const svc = "bench-update"
	reg := url.Values{"serviceName": {svc}, "ip": {"10.0.0.61"}, "port": {"8080"}}
	if code, body := call1x(b, doors[0], "POST", "/nacos/v1/ns/instance", reg); code != 200 {
		b.Fatalf("register: %d %s", code, body)
	}
	weightOn := func(door *nacos.Server) any {
		if h := hosts1x(b, door, svc); len(h) == 1 {
			return h[0]["weight"]
		}
		return nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for weightOn(doors[9]) == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		w := float64(i % 2)
		upd := url.Values{"serviceName": {svc}, "ip": {"10.0.0.61"}, "port": {"8080"}, "weight": {fmt.Sprint(w)}}
		start := time.Now()
		if code, body := call1x(b, doors[0], "PUT", "/nacos/v1/ns/instance", upd); code != 200 {
			b.Fatalf("PUT: %d %s", code, body)
		}
		for weightOn(doors[9]) != w {
			if time.Since(start) > 30*time.Second {
				b.Fatalf("agent 9 lists weight %v 30 s after the update to %v", weightOn(doors[9]), w)
			}
			time.Sleep(time.Millisecond)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	reportPercentiles(b, took)
}
