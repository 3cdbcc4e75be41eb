package rocketmq

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

// benchServer serves a table with a few brokers and topics, as a client's
// NameServer would.
func benchServer(b *testing.B) *Server {
	reg := newFake()
	s := startServer(b, reg)
	c := dial(b, s) // brokers stay registered while their connection is open
	for i, name := range []string{"broker-a", "broker-b", "broker-c"} {
		br := brokerA()
		br.Name, br.Addr = name, fmt.Sprintf("10.0.0.%d:10911", i+1)
		if _, err := c.Register(br); err != nil {
			b.Fatal(err)
		}
		slave := *br
		slave.ID, slave.Addr = 1, fmt.Sprintf("10.0.1.%d:10911", i+1)
		if _, err := c.Register(&slave); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkPipelinedRouteQuery drives GET_ROUTEINFO_BY_TOPIC as Go client
// v2.1.2 sends it (JSON header, version 317, legacy body) over loopback TCP,
// with a window of requests in flight on each connection, and reports
// queries/s and latency percentiles. Client and server share the machine.
func BenchmarkPipelinedRouteQuery(b *testing.B) {
	for _, conns := range []int{1, 4} {
		b.Run(fmt.Sprintf("conns=%d/window=64", conns), func(b *testing.B) {
			s := benchServer(b)
			per := b.N/conns + 1
			lat := make([]time.Duration, 0, per*conns)
			var mu sync.Mutex
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for i := 0; i < conns; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					l, err := pipeline(s.Addr(), per, 64)
					if err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					lat = append(lat, l...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if len(lat) == 0 {
				return
			}
			slices.Sort(lat)
			b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "queries/s")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// pipeline sends n route queries on one connection with at most window in
// flight and returns each one's latency.
func pipeline(addr string, n, window int) ([]time.Duration, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	sent := make([]atomic.Int64, n)
	lat := make([]time.Duration, n)
	slots := make(chan struct{}, window)
	readErr := make(chan error, 1)
	go func() {
		dec := remoting.NewDecoder(bufio.NewReaderSize(nc, 64<<10), 0)
		for i := 0; i < n; i++ {
			resp, err := dec.Decode()
			if err != nil {
				readErr <- err
				return
			}
			if resp.Code != remoting.Success {
				readErr <- fmt.Errorf("route query failed: %v", resp)
				return
			}
			k := int(resp.Opaque) - 1
			lat[k] = time.Duration(time.Now().UnixNano() - sent[k].Load())
			<-slots
		}
		readErr <- nil
	}()
	bw := bufio.NewWriterSize(nc, 64<<10)
	req := remoting.NewRequest(remoting.GetRouteInfoByTopic, map[string]string{"topic": "TopicTest"}, nil)
	req.Language, req.Version = remoting.LanguageGo, remoting.VersionGoClient
	var frame []byte
	for i := 0; i < n; i++ {
		select {
		case slots <- struct{}{}:
		default:
			if err := bw.Flush(); err != nil {
				return nil, err
			}
			slots <- struct{}{}
		}
		req.Opaque = int32(i + 1)
		frame, _ = remoting.AppendFrame(frame[:0], req)
		sent[i].Store(time.Now().UnixNano())
		if _, err := bw.Write(frame); err != nil {
			return nil, err
		}
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	return lat, <-readErr
}

// BenchmarkRouteHandler is the server's share of a route query without the
// network: the handler and the response encoding (allocations are the
// server's alone).
func BenchmarkRouteHandler(b *testing.B) {
	s := benchServer(b)
	req := remoting.NewRequest(remoting.GetRouteInfoByTopic, map[string]string{"topic": "TopicTest"}, nil)
	req.Version = remoting.VersionGoClient
	h := lookup(req.Code)
	var rep reply
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		rep.reset(req)
		s.run(h, nil, req, &rep)
		out, _ = remoting.AppendFrame(out[:0], &rep.Command)
	}
}
