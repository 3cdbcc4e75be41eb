package bench

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Query performs one route query and returns an error for a failed or
// wrong answer. One Query is used by one worker only, so it may keep a
// connection of its own.
type Query func() error

// QueryMaker makes a worker's Query and the function that releases what
// it holds. This is the hook for every query path: HTTP here, the RocketMQ
// protocol port beside it later, measured by the same RunLoad.
type QueryMaker func() (Query, func(), error)

// LoadResult is what RunLoad measured.
type LoadResult struct {
	Requests  int
	Errors    int
	Elapsed   time.Duration
	Latency   Stat      // seconds, over every request
	PerSecond []float64 // requests completed in each whole second
	FirstErr  error
}

// Throughput is requests per second over the whole run.
func (r LoadResult) Throughput() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// RunLoad runs clients workers, each issuing queries back to back (a
// closed loop: a worker waits for each answer before the next), for dur.
func RunLoad(ctx context.Context, mk QueryMaker, clients int, dur time.Duration) (LoadResult, error) {
	queries := make([]Query, clients)
	for i := range queries {
		q, release, err := mk()
		if err != nil {
			return LoadResult{}, fmt.Errorf("preparing client %d: %w", i, err)
		}
		defer release()
		queries[i] = q
	}
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	start := time.Now()
	secs := int(dur/time.Second) + 1
	type worker struct {
		lat    []time.Duration
		perSec []int
		errs   int
		first  error
	}
	ws := make([]worker, clients)
	var wg sync.WaitGroup
	for i := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &ws[i]
			w.lat = make([]time.Duration, 0, 1<<16)
			w.perSec = make([]int, secs)
			for ctx.Err() == nil {
				t0 := time.Now()
				err := queries[i]()
				t1 := time.Now()
				if err != nil {
					w.errs++
					if w.first == nil {
						w.first = err
					}
					continue
				}
				w.lat = append(w.lat, t1.Sub(t0))
				if s := int(t1.Sub(start) / time.Second); s < secs {
					w.perSec[s]++
				}
			}
		}()
	}
	wg.Wait()
	res := LoadResult{Elapsed: time.Since(start)}
	var all []time.Duration
	perSec := make([]float64, int(res.Elapsed/time.Second))
	for _, w := range ws {
		all = append(all, w.lat...)
		res.Errors += w.errs
		if res.FirstErr == nil {
			res.FirstErr = w.first
		}
		for s := range perSec {
			perSec[s] += float64(w.perSec[s])
		}
	}
	res.Requests, res.PerSecond = len(all), perSec
	res.Latency = Summarize(Seconds(all))
	return res, nil
}
