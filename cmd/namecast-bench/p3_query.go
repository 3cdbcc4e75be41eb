package main

import (
	"context"
	"fmt"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/internal/bench"
)

// p3Topic is the topic queried: registered on p3Brokers brokers, so an
// answer lists that many queue and broker entries (~600 bytes of JSON).
const (
	p3Topic   = "TopicTest"
	p3Brokers = 4
)

// queryPath is one way of asking an agent for a route over HTTP, measured
// by RunLoad as a closed loop per client. The RocketMQ port is measured
// pipelined instead (runP3RocketMQ), as RocketMQ clients use it.
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
	c, err := bench.StartCluster(ctx, 1, "lan", func(cfg *agent.Config) { cfg.RocketMQAddr = "127.0.0.1:0" })
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
		if _, err := agent.Door[*httpapi.Server](a.Agent).RegisterBroker(brokerOf(fmt.Sprintf("broker-%d", i), topics...), 0); err != nil {
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
			figs = append(figs, p3Figures(fmt.Sprintf("%s c=%d", qp.name, clients), res, fmt.Sprintf("%s load client", o.p3Client), 30000)...)
			if res.Errors > 0 {
				return figs, fmt.Errorf("%s with %d clients: %d of %d queries failed, first: %v", qp.name, clients, res.Errors, res.Errors+res.Requests, res.FirstErr)
			}
		}
	}
	f, err := runP3RocketMQ(ctx, a.Agent.Addr("rocketmq"), o)
	return append(figs, f...), err
}

// runP3RocketMQ queries the RocketMQ NameServer port as RocketMQ clients
// do: GET_ROUTEINFO_BY_TOPIC frames pipelined on long-lived connections.
func runP3RocketMQ(ctx context.Context, addr string, o *options) ([]bench.Figure, error) {
	var figs []bench.Figure
	for _, conns := range o.p3Conns {
		for _, window := range o.p3Windows {
			if ctx.Err() != nil {
				return figs, ctx.Err()
			}
			res, err := bench.RunPipelined(ctx, addr, p3Topic, conns, window, o.p3For)
			if err != nil {
				return figs, fmt.Errorf("RocketMQ port, %d connections × %d in flight: %w", conns, window, err)
			}
			bench.Progress("  RocketMQ %d conns × %d in flight: %.0f req/s, p99 %.3fms, %d errors", conns, window, res.Throughput(), res.Latency.P99*1e3, res.Errors)
			figs = append(figs, p3Figures(fmt.Sprintf("RocketMQ c=%d w=%d", conns, window), res, "pipelined client (JSON headers, as rocketmq-client-go)", 50000)...)
			if res.Errors > 0 {
				return figs, fmt.Errorf("RocketMQ port, %d connections × %d in flight: %v", conns, window, res.FirstErr)
			}
		}
	}
	return figs, nil
}

// p3Figures judges latency and throughput against the goals: p99
// ≤ 1 ms with at least minRate req/s (30k over HTTP, 50k on the RocketMQ
// port).
func p3Figures(cs string, res bench.LoadResult, client string, minRate float64) []bench.Figure {
	rate := res.Throughput()
	k := fmt.Sprintf("%.0fk req/s", minRate/1000)
	lat := bench.Figure{Scenario: "P3", Case: cs, Metric: "latency", Unit: bench.UnitSeconds, Namecast: res.Latency}
	lat = lat.Judge("p99 ≤ 1ms at ≥ "+k, res.Latency.P99 <= 1e-3 && rate >= minRate)
	lat.Note = fmt.Sprintf("%d requests in %v, %.0f req/s overall, %s sharing the cores", res.Requests, res.Elapsed.Round(time.Millisecond), rate, client)
	thr := bench.Figure{Scenario: "P3", Case: cs, Metric: "req/s per second", Unit: bench.UnitReqPS, Namecast: bench.Summarize(res.PerSecond)}
	thr = thr.Judge("≥ "+k, rate >= minRate)
	return []bench.Figure{lat, thr}
}
