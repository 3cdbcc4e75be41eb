package main

import (
	"context"
	"fmt"
	"time"

	"github.com/namecast/namecast/internal/bench"
)

// p3Topic is the topic queried: registered on p3Brokers brokers, so an
// answer lists that many queue and broker entries (~600 bytes of JSON).
const (
	p3Topic   = "TopicTest"
	p3Brokers = 4
)

// queryPath is one way of asking an agent for a route. RunLoad measures
// every path alike; the RocketMQ protocol port (GET_ROUTEINFO_BY_TOPIC on
// the agent's RocketMQ listener) goes here beside HTTP once it exists:
// add an entry whose make function dials the agent's RocketMQ address and
// whose Query sends one request frame and reads one response frame.
type queryPath struct {
	name string
	make func(a *bench.Agent, o *options) (bench.QueryMaker, error)
}

var queryPaths = []queryPath{
	{"HTTP", httpPath},
}

func httpPath(a *bench.Agent, o *options) (bench.QueryMaker, error) {
	path := "/v1/topics/" + p3Topic
	if o.p3Client == "std" {
		return bench.StdHTTPQuery(a.Agent.HTTPAddr(), path), nil
	}
	return bench.LeanHTTPQuery(a.Agent.HTTPAddr(), path), nil
}

func runP3(ctx context.Context, o *options) ([]bench.Figure, error) {
	c, err := bench.StartCluster(ctx, 1, "lan")
	if err != nil {
		return nil, err
	}
	defer c.Close()
	a := c.Running()[0]
	for i := range p3Brokers {
		topics := []string{p3Topic}
		for t := range 100 {
			topics = append(topics, fmt.Sprintf("topic-%03d", t))
		}
		if _, err := a.Agent.RegisterBroker(brokerOf(fmt.Sprintf("broker-%d", i), topics...), 0); err != nil {
			return nil, err
		}
	}
	var figs []bench.Figure
	for _, qp := range queryPaths {
		mk, err := qp.make(a, o)
		if err != nil {
			return figs, fmt.Errorf("%s: %w", qp.name, err)
		}
		for _, clients := range o.p3Clients {
			if ctx.Err() != nil {
				return figs, ctx.Err()
			}
			res, err := bench.RunLoad(ctx, mk, clients, o.p3For)
			if err != nil {
				return figs, fmt.Errorf("%s with %d clients: %w", qp.name, clients, err)
			}
			bench.Progress("  %s %d clients: %.0f req/s, p99 %.3fms, %d errors", qp.name, clients, res.Throughput(), res.Latency.P99*1e3, res.Errors)
			figs = append(figs, p3Figures(qp.name, clients, res, o)...)
			if res.Errors > 0 {
				return figs, fmt.Errorf("%s with %d clients: %d of %d queries failed, first: %v", qp.name, clients, res.Errors, res.Errors+res.Requests, res.FirstErr)
			}
		}
	}
	return figs, nil
}

func p3Figures(path string, clients int, res bench.LoadResult, o *options) []bench.Figure {
	cs := fmt.Sprintf("%s c=%d", path, clients)
	rate := res.Throughput()
	lat := bench.Figure{Scenario: "P3", Case: cs, Metric: "latency", Unit: bench.UnitSeconds, Namecast: res.Latency}
	lat = lat.Judge("p99 ≤ 1ms at ≥ 30k req/s", res.Latency.P99 <= 1e-3 && rate >= 30000)
	lat.Note = fmt.Sprintf("%d requests in %v, %.0f req/s overall, %s load client sharing the cores", res.Requests, res.Elapsed.Round(time.Millisecond), rate, o.p3Client)
	thr := bench.Figure{Scenario: "P3", Case: cs, Metric: "req/s per second", Unit: bench.UnitReqPS, Namecast: bench.Summarize(res.PerSecond)}
	thr = thr.Judge("≥ 30k req/s", rate >= 30000)
	return []bench.Figure{lat, thr}
}
