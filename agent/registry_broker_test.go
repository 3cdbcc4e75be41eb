package agent_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/routes"
)

// A master's registration replaces its topics: the ones it no longer lists
// are withdrawn, another broker's (even one whose name starts with this
// one's) are not, and a slave's registration withdraws none. The records
// are read with a scan of every local record, not the by-broker lookup
// RegisterBroker uses.
func TestRegisterBrokerReplacesOnlyItsOwnTopics(t *testing.T) {
	c := agenttest.Start(t, 1)
	a := c.Agent(0)
	reg := func(name string, id int64, perm int, topics ...string) {
		t.Helper()
		r := httpapi.BrokerRegistration{Cluster: "c", BrokerName: name, BrokerID: id, Addr: fmt.Sprintf("192.0.2.%d:10911", id+1),
			Topics: map[string]httpapi.TopicConfig{}}
		for _, tp := range topics {
			r.Topics[tp] = httpapi.TopicConfig{ReadQueueNums: 4, WriteQueueNums: 4, Perm: perm}
		}
		if _, err := agent.Door[*httpapi.Server](a).RegisterBroker(r, 0); err != nil {
			t.Fatal(err)
		}
	}
	want := func(step string, keys ...string) {
		t.Helper()
		var got []string
		for _, r := range a.Table().LocalRecords("") {
			got = append(got, r.Key())
		}
		slices.Sort(keys)
		if !slices.Equal(got, keys) {
			t.Fatalf("%s: local records %q, want %q", step, got, keys)
		}
		// What the RocketMQ door and RegisterBroker read of one broker.
		for _, name := range []string{"broker-a", "broker-ab"} {
			var of, wantOf []string
			for _, r := range a.Table().LocalRecords(routes.QueuePrefix(name)) {
				of = append(of, r.Key())
			}
			for _, k := range keys {
				if strings.HasPrefix(k, routes.QueuePrefix(name)) {
					wantOf = append(wantOf, k)
				}
			}
			if !slices.Equal(of, wantOf) {
				t.Fatalf("%s: %s's queue records %q, want %q", step, name, of, wantOf)
			}
		}
	}
	reg("broker-a", 0, 6, "T1", "T2", "T3")
	reg("broker-ab", 0, 6, "T1", "T9")
	reg("broker-a", 1, 6) // a slave lists no topics
	want("registered", "broker/broker-a/0", "broker/broker-a/1", "broker/broker-ab/0",
		"queue/broker-a/T1", "queue/broker-a/T2", "queue/broker-a/T3", "queue/broker-ab/T1", "queue/broker-ab/T9")

	reg("broker-a", 0, 4, "T2")
	want("broker-a re-registered with T2 only", "broker/broker-a/0", "broker/broker-a/1", "broker/broker-ab/0",
		"queue/broker-a/T2", "queue/broker-ab/T1", "queue/broker-ab/T9")
	if rs := a.Table().LocalRecords(routes.QueueKey("broker-a", "T2")); len(rs) != 1 || rs[0].Queue.Perm != 4 {
		t.Fatalf("broker-a's T2 after its re-registration with perm 4: %+v", rs)
	}

	reg("broker-a", 0, 4, "T7")
	reg("broker-a", 0, 4)
	want("broker-a re-registered with no topic", "broker/broker-a/0", "broker/broker-a/1", "broker/broker-ab/0",
		"queue/broker-ab/T1", "queue/broker-ab/T9")
}

// BenchmarkReRegisterBroker is a broker's periodic registration (the same
// 1000 topics) on an agent that carries 50 such brokers: it reads that
// broker's records to find the topics it no longer lists.
//
//	go test -run '^$' -bench ReRegisterBroker -benchtime 200x ./agent/
func BenchmarkReRegisterBroker(b *testing.B) {
	c := agenttest.Start(b, 1)
	a := c.Agent(0)
	regs := make([]httpapi.BrokerRegistration, 50)
	for i := range regs {
		regs[i] = httpapi.BrokerRegistration{Cluster: "c", BrokerName: fmt.Sprintf("broker-%03d", i), Addr: "192.0.2.1:10911",
			Topics: map[string]httpapi.TopicConfig{}}
		for t := range 1000 {
			regs[i].Topics[fmt.Sprintf("topic-%04d", t)] = httpapi.TopicConfig{ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}
		}
		if _, err := agent.Door[*httpapi.Server](a).RegisterBroker(regs[i], 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := agent.Door[*httpapi.Server](a).RegisterBroker(regs[i%len(regs)], 0); err != nil {
			b.Fatal(err)
		}
	}
}
