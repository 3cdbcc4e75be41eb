package agent_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/nacos/nacostest"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// BenchmarkDoorWriteLatency is what --data-dir costs a write's answer,
// door by door: every change is fsynced before it is answered, and
// writers at the same moment share one fsync (group commit). Each write
// is a new or changed record of the door's own kind:
//
//   - http: PUT /v1/urls of a new dynamic URL (a lease, leases.log)
//   - rocketmq: REGISTER_BROKER of a new broker (a lease, leases.log)
//   - zookeeper: setData of the writer's ephemeral znode (its session's
//     lease, leases.log)
//   - kv: PUT_KV_CONFIG (a rule, rules.log)
//   - nacos: a gRPC InstanceRequest of a new instance on the writer's
//     connection (its lease, leases.log)
//
// by 1 and by 16 writers at once, each on its own connection, with and
// without a data dir; p50 and p99 of one write's answer are reported.
//
//	go test -run '^$' -bench DoorWriteLatency -benchtime 400x ./agent/
func BenchmarkDoorWriteLatency(b *testing.B) {
	for _, door := range []string{"http", "rocketmq", "zookeeper", "kv", "nacos"} {
		for _, writers := range []int{1, 16} {
			for _, durable := range []bool{false, true} {
				b.Run(fmt.Sprintf("door=%s/writers=%d/data-dir=%v", door, writers, durable), func(b *testing.B) {
					var opts []agenttest.Option
					if durable {
						opts = append(opts, agenttest.WithDataDirs(b.TempDir()))
					}
					c := agenttest.Start(b, 1, opts...)
					benchWriters(b, writers, func(w int) func(i int) error { return writerFor(b, c, door, w) })
				})
			}
		}
	}
}

// benchWriters runs b.N writes split among writers, each made by its own
// writer (from mk), and reports the latency percentiles of one write.
func benchWriters(b *testing.B, writers int, mk func(w int) func(i int) error) {
	fns := make([]func(int) error, writers)
	for w := range fns {
		fns[w] = mk(w)
	}
	lat := make([][]time.Duration, writers)
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.N; i += writers {
				start := time.Now()
				if err := fns[w](i); err != nil {
					b.Error(err)
					return
				}
				lat[w] = append(lat[w], time.Since(start))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// writerFor makes writer w of door: its connection, and a write per i.
func writerFor(b *testing.B, c *agenttest.Cluster, door string, w int) func(i int) error {
	a := c.Agent(0)
	switch door {
	case "http":
		cl := &http.Client{Timeout: 30 * time.Second}
		return func(i int) error {
			body, _ := json.Marshal(map[string]string{"url": benchURL("w"+strconv.Itoa(w), i)})
			req, _ := http.NewRequest("PUT", "http://"+a.HTTPAddr()+"/v1/urls", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := cl.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		}
	case "rocketmq", "kv":
		cl, err := rocketmqtest.Dial(a.Addr("rocketmq"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cl.Close() })
		if door == "kv" {
			return func(i int) error {
				resp, err := cl.Do(remoting.PutKVConfig, map[string]string{"namespace": "bench", "key": fmt.Sprintf("k%d-%d", w, i), "value": "v"}, nil)
				if err == nil && resp.Code != remoting.Success {
					err = fmt.Errorf("code %d %s", resp.Code, resp.Remark)
				}
				return err
			}
		}
		return func(i int) error {
			br := &rocketmqtest.Broker{Cluster: "bench", Name: fmt.Sprintf("b-%d-%d", w, i), Addr: fmt.Sprintf("10.%d.%d.%d:10911", w, i/250%250, i%250),
				Topics: map[string]remoting.TopicConfig{"BenchTopic": rocketmqtest.Topic("BenchTopic", 4), "TBW102": rocketmqtest.Topic("TBW102", 8)}}
			_, err := cl.Register(br)
			return err
		}
	case "zookeeper":
		zk := dialZKB(b, a.Addr("zookeeper"))
		acl := []zkwire.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}
		zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: "/bench", ACL: acl})
		p := fmt.Sprintf("/bench/w%d", w)
		if code := zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: p, Data: []byte("0"), ACL: acl, Flags: zkwire.FlagEphemeral}); code != 0 {
			b.Fatalf("create %s: %d", p, code)
		}
		return func(i int) error {
			if code := zk.call(zkwire.OpSetData, &zkwire.SetDataRequest{Path: p, Data: []byte(strconv.Itoa(i)), Version: -1}); code != 0 {
				return fmt.Errorf("setData: %d", code)
			}
			return nil
		}
	case "nacos":
		nc := nacostest.Dial(b, a.Addr("nacos-grpc"))
		return func(i int) error {
			return nc.Register("providers:com.example.Bench:1.0.0:", nacoswire.Instance{IP: fmt.Sprintf("10.%d.%d.%d", w, i/250%250, i%250),
				Port: 20880, Weight: 1, Healthy: true, Enabled: true, Metadata: map[string]string{"interface": "com.example.Bench", "version": "1.0.0"}})
		}
	}
	b.Fatalf("no door %q", door)
	return nil
}
