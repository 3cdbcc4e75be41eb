package agent_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/routes"
)

// A blocking query on one topic returns when that topic's route changes,
// with the index of that change, and sleeps through changes to other
// topics and services.
func TestBlockingQueryWaitsForItsOwnView(t *testing.T) {
	c := agenttest.Start(t, 2)
	http0, http1 := c.Agent(0).HTTPAddr(), c.Agent(1).HTTPAddr()
	table := c.Agent(1).Table()
	// Every registration changes the topic list and the cluster table
	// too: the watched names must share no slot with those, or every
	// change below may wake the watch (with this table's hash seed, a few
	// runs in a hundred), and no unrelated name can be found.
	own, topic := "own", "Own"
	lists := append(append(append(routes.Watch{}, routes.WatchTopics...), routes.WatchClusters...), routes.WatchServices...)
	for i := 0; table.Overlaps(ownKeys(table, own, topic), lists); i++ {
		if i == 1000 {
			t.Fatal("no topic and broker name sharing no slot with the lists in 1000 tries")
		}
		own, topic = fmt.Sprintf("own%d", i), fmt.Sprintf("Own%d", i)
	}
	call(t, "PUT", http0, "/v1/brokers", brokerReg(own, "10.4.0.1:10911", topic), nil)
	everywhere(t, c, 10*time.Second, wantRoute(t, topic, "10.4.0.1:10911"))
	watch := table.WatchTopicRoute(topic)
	_, h := call(t, "GET", http1, "/v1/topics/"+topic, nil, &route{})
	index, _ := strconv.ParseUint(h.Get("X-Namecast-Index"), 10, 64)
	if index != table.IndexOf(watch) {
		t.Fatalf("route answered index %d, its view's is %d", index, table.IndexOf(watch))
	}

	type answer struct {
		index uint64
		addr  string
		at    time.Time
	}
	done := make(chan answer, 1)
	go func() {
		var r route
		_, h := call(t, "GET", http1, "/v1/topics/"+topic+"?index="+strconv.FormatUint(index, 10)+"&wait=60s", nil, &r)
		i, _ := strconv.ParseUint(h.Get("X-Namecast-Index"), 10, 64)
		done <- answer{i, r.BrokerDatas[0].BrokerAddrs["0"], time.Now()}
	}()
	// Unrelated changes, on names that share no slot with the watch.
	for i, n := 0, 0; n < 5; i++ {
		if i == 1000 {
			t.Fatalf("only %d of 5 unrelated names in 1000 tries", n)
		}
		otopic, iface, name := fmt.Sprintf("Other%d", i), fmt.Sprintf("com.other.S%d", i), "other"+strconv.Itoa(i)
		other := slices.Concat(routes.WatchBroker(name), routes.WatchClusters, table.WatchTopicRoute(otopic), routes.WatchTopics,
			routes.WatchService(iface, "providers"), routes.WatchServices)
		if table.Overlaps(watch, other) {
			continue
		}
		n++
		call(t, "PUT", http0, "/v1/brokers", brokerReg(name, "10.4.1.1:10911", otopic), nil)
		call(t, "PUT", http0, "/v1/urls", map[string]string{"url": "dubbo://10.4.2.1:20880/" + iface}, nil)
		everywhere(t, c, 10*time.Second, wantRoute(t, otopic, "10.4.1.1:10911"))
	}
	select {
	case a := <-done:
		t.Fatalf("the watch on %s returned at index %d for changes to other topics and services", topic, a.index)
	default:
	}
	if table.Index() <= index {
		t.Fatalf("the table's index %d did not move past %d", table.Index(), index)
	}

	// Its own broker moves: the watch returns with the new address.
	moved := time.Now()
	call(t, "PUT", http0, "/v1/brokers", brokerReg(own, "10.4.0.2:10911", topic), nil)
	select {
	case a := <-done:
		if a.addr != "10.4.0.2:10911" || a.index <= index || a.index != table.IndexOf(table.WatchTopicRoute(topic)) {
			t.Fatalf("woke with %q at index %d (asked %d, view now %d)", a.addr, a.index, index, table.IndexOf(watch))
		}
		t.Logf("woke %v after the change", a.at.Sub(moved))
	case <-time.After(20 * time.Second):
		t.Fatalf("the watch on %s did not return when its broker moved", topic)
	}
	if status, _ := call(t, "GET", http1, "/v1/health", nil, nil); status != http.StatusOK {
		t.Fatalf("health: %d", status)
	}
}

// ownKeys are the watch keys of a topic served by one broker, before it
// is registered.
func ownKeys(table *routes.Table, broker, topic string) routes.Watch {
	return slices.Concat(routes.WatchBroker(broker), table.WatchTopicRoute(topic))
}
