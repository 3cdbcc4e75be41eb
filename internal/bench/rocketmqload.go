package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

// RunPipelined drives GET_ROUTEINFO_BY_TOPIC, framed as rocketmq-client-go
// v2.1.2 sends it (JSON header), at the RocketMQ NameServer port addr for
// dur: conns connections, each keeping window requests in flight, matched
// to their answers by opaque as a RocketMQ client does. A request's latency
// runs from its write to its answer, so with window > 1 it includes the
// wait behind the requests ahead of it on the connection.
func RunPipelined(ctx context.Context, addr, topic string, conns, window int, dur time.Duration) (LoadResult, error) {
	ncs := make([]net.Conn, conns)
	for i := range ncs {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return LoadResult{}, fmt.Errorf("connection %d: %w", i, err)
		}
		defer nc.Close()
		ncs[i] = nc
	}
	start := time.Now()
	deadline := start.Add(dur)
	secs := int(dur/time.Second) + 1
	type worker struct {
		lat    []time.Duration
		perSec []int
		err    error
	}
	ws := make([]worker, conns)
	var wg sync.WaitGroup
	for i := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &ws[i]
			w.perSec = make([]int, secs)
			w.lat, w.err = pipelineUntil(ctx, ncs[i], topic, window, deadline, start, w.perSec)
		}()
	}
	wg.Wait()
	res := LoadResult{Elapsed: time.Since(start)}
	var all []time.Duration
	perSec := make([]float64, int(res.Elapsed/time.Second))
	for _, w := range ws {
		all = append(all, w.lat...)
		if w.err != nil {
			res.Errors++
			if res.FirstErr == nil {
				res.FirstErr = w.err
			}
		}
		for s := range perSec {
			if s < len(w.perSec) {
				perSec[s] += float64(w.perSec[s])
			}
		}
	}
	res.Requests, res.PerSecond = len(all), perSec
	res.Latency = Summarize(Seconds(all))
	return res, nil
}

// pipelineUntil sends route queries on nc, window at a time, until
// deadline, then waits for the answers still in flight. Writes are
// buffered and flushed whenever the window is full, so requests go out in
// batches as a busy client's would.
func pipelineUntil(ctx context.Context, nc net.Conn, topic string, window int, deadline, start time.Time, perSec []int) ([]time.Duration, error) {
	var (
		mu       sync.Mutex
		sent     = map[int32]time.Time{}
		lat      = make([]time.Duration, 0, 1<<16)
		stopping sync.WaitGroup // held by the reader
	)
	slots := make(chan struct{}, window)
	readErr := make(chan error, 1)
	stopping.Add(1)
	go func() {
		defer stopping.Done()
		dec := remoting.NewDecoder(bufio.NewReaderSize(nc, 64<<10), 0)
		for {
			resp, err := dec.Decode()
			if err != nil {
				readErr <- err
				return
			}
			now := time.Now()
			if resp.Code != remoting.Success {
				readErr <- fmt.Errorf("route query answered %d: %s", resp.Code, resp.Remark)
				return
			}
			mu.Lock()
			t0, ok := sent[resp.Opaque]
			delete(sent, resp.Opaque)
			mu.Unlock()
			if !ok {
				readErr <- fmt.Errorf("answer to opaque %d, which is not in flight", resp.Opaque)
				return
			}
			lat = append(lat, now.Sub(t0))
			if s := int(now.Sub(start) / time.Second); s < len(perSec) {
				perSec[s]++
			}
			<-slots
		}
	}()
	bw := bufio.NewWriterSize(nc, 64<<10)
	req := remoting.NewRequest(remoting.GetRouteInfoByTopic, map[string]string{"topic": topic}, nil)
	req.Language, req.Version = remoting.LanguageGo, remoting.VersionGoClient
	var frame []byte
	// take waits for a free slot, flushing first if the window is full.
	take := func() error {
		select {
		case slots <- struct{}{}:
			return nil
		default:
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		select {
		case slots <- struct{}{}:
			return nil
		case err := <-readErr:
			return fmt.Errorf("reading answers: %w", err)
		}
	}
	var err error
	for n := int32(1); err == nil && ctx.Err() == nil && time.Now().Before(deadline); n++ {
		if err = take(); err != nil {
			break
		}
		req.Opaque = n
		frame, _ = remoting.AppendFrame(frame[:0], req)
		mu.Lock()
		sent[n] = time.Now()
		mu.Unlock()
		_, err = bw.Write(frame)
	}
	if err == nil {
		err = bw.Flush()
	}
	// Every slot free again means every answer is in.
	for i := 0; err == nil && i < window; i++ {
		err = take()
	}
	nc.Close()
	stopping.Wait()
	return lat, err
}
