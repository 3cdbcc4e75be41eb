package rocketmq

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// staticBroker is broker-a as a 5.x Java broker serving the static topic
// StaticTopic registers: its body as fastjson writes it (fields in name
// order, currIdMap's and hostedQueues' integer keys bare), with the
// mapping at epoch and DataVersion counter.
func staticBroker(epoch, counter int64, ids string) *rocketmqtest.Broker {
	b := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "broker-a", ID: 0, Addr: "10.0.0.1:10911",
		HAAddr: "10.0.0.1:10912", ActingMaster: true}
	topic := func(name string, n int) string {
		return fmt.Sprintf(`"%s":{"attributes":{},"order":false,"perm":6,"readQueueNums":%d,"topicFilterType":"SINGLE_TAG","topicName":"%s","topicSysFlag":0,"writeQueueNums":%d}`, name, n, name, n)
	}
	info := fmt.Sprintf(`"bname":"broker-a","currIdMap":{%s},"dirty":false,"epoch":%d,"scope":"__global__","topic":"StaticTopic","totalQueues":2`, ids, epoch)
	b.RawBody = []byte(`{"filterServerList":[],"topicConfigSerializeWrapper":{` +
		fmt.Sprintf(`"dataVersion":{"counter":%d,"stateVersion":0,"timestamp":1700000000000},`, counter) +
		`"mappingDataVersion":{"counter":1,"stateVersion":0,"timestamp":1700000000000},` +
		`"topicConfigTable":{` + topic("StaticTopic", 2) + `,` + topic("TopicTest", 4) + `},` +
		`"topicQueueMappingDetailMap":{"StaticTopic":{` + info + `,"hostedQueues":{0:[{"bname":"broker-a","endOffset":-1,"gen":0,"logicOffset":0,"queueId":0,"startOffset":0,"timeOfEnd":-1,"timeOfStart":-1}]}}},` +
		`"topicQueueMappingInfoMap":{"StaticTopic":{` + info + `}}}}`)
	return b
}

// rawRoute is a route's body as the client gets it, nil when not SUCCESS.
func rawRoute(t *testing.T, c *rocketmqtest.Client, topic string, version int) []byte {
	t.Helper()
	resp, err := c.Route(topic, version)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != remoting.Success {
		return nil
	}
	return resp.Body
}

// Item 4 of issue 14: a 5.x broker's static-topic mappings, registered on
// agent A, are in the topic's route on agent C, shaped as Java's
// NameServer writes topicQueueMappingByBroker; a topic without mappings
// has none, and the mappings go with the broker.
func TestStaticTopicMappingsAcrossAgents(t *testing.T) {
	testutil.CheckLeaks(t)
	x := startThree(t)
	register(t, x.master, staticBroker(1700000000123, 1, "0:0,1:1"))
	want := map[int]string{
		remoting.VersionCurrent: `"topicQueueMappingByBroker":{"broker-a":{"bname":"broker-a","currIdMap":{"0":0,"1":1},"dirty":false,"epoch":1700000000123,"scope":"__global__","topic":"StaticTopic","totalQueues":2}}}`,
		399:                     `"topicQueueMappingByBroker":{"broker-a":{"bname":"broker-a","currIdMap":{0:0,1:1},"dirty":false,"epoch":1700000000123,"scope":"__global__","topic":"StaticTopic","totalQueues":2}}}`,
	}
	for version, tail := range want {
		testutil.Eventually(t, 5*time.Second, func() error {
			if body := rawRoute(t, x.q, "StaticTopic", version); !bytes.HasSuffix(body, []byte(tail)) {
				return fmt.Errorf("version %d: route %s, want it to end %s", version, body, tail)
			}
			return nil
		})
	}
	td := route(t, x.q, "StaticTopic")
	if m := td.TopicQueueMappingByBroker["broker-a"]; m.TotalQueues != 2 || m.CurrIDMap[1] != 1 || m.Epoch != 1700000000123 {
		t.Fatalf("decoded mapping %+v", m)
	}
	if body := rawRoute(t, x.q, "TopicTest", remoting.VersionCurrent); body == nil || bytes.Contains(body, []byte("topicQueueMapping")) {
		t.Fatalf("a topic without static mappings answers %s", body)
	}

	// Like Java, the same DataVersion leaves the mapping as it was; a new
	// one replaces it.
	register(t, x.master, staticBroker(1700000000999, 1, "0:0,1:5"))
	if body := rawRoute(t, x.q, "StaticTopic", remoting.VersionCurrent); !bytes.HasSuffix(body, []byte(want[remoting.VersionCurrent])) {
		t.Fatalf("an unchanged DataVersion changed the mapping: %s", body)
	}
	register(t, x.master, staticBroker(1700000000999, 2, "0:0,1:5"))
	testutil.Eventually(t, 5*time.Second, func() error {
		if body := rawRoute(t, x.q, "StaticTopic", remoting.VersionCurrent); !bytes.Contains(body, []byte(`"currIdMap":{"0":0,"1":5},"dirty":false,"epoch":1700000000999`)) {
			return fmt.Errorf("route %s", body)
		}
		return nil
	})

	if err := x.master.Unregister(staticBroker(0, 2, "")); err != nil {
		t.Fatal(err)
	}
	for _, reg := range x.regs {
		testutil.Eventually(t, 5*time.Second, func() error {
			if ms := reg.Routes.Mappings("StaticTopic"); ms != nil {
				return fmt.Errorf("%s still holds mappings %+v", reg.Routes.Local(), ms)
			}
			return nil
		})
	}
}

// A broker without static topics (every 5.x broker sends an empty
// topicQueueMappingInfoMap) gets no mapping record: it pays nothing for
// the feature (routes TestFootprintPerRecord bounds what records cost).
func TestBrokerWithoutMappingsHasNoMappingRecords(t *testing.T) {
	testutil.CheckLeaks(t)
	reg := newFake()
	s := startServer(t, reg)
	c := dial(t, s)
	b := brokerA()
	register(t, c, b)
	req, err := b.RegisterRequest()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(req.Body), `"topicQueueMappingInfoMap":{}`) {
		t.Fatalf("not a 5.x body: %s", req.Body)
	}
	recs := reg.LocalRecords("")
	if len(recs) != 3 {
		t.Fatalf("records %+v, want the broker and its two topics", recs)
	}
	if ms := reg.LocalRecords(routes.MappingPrefix("broker-a")); len(ms) != 0 {
		t.Fatalf("mapping records %+v", ms)
	}
}
