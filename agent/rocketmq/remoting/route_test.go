package remoting

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The route of §3.2: one group with a master and a slave.
func specRoute() *TopicRouteData {
	return &TopicRouteData{
		QueueDatas: []QueueData{{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}},
		BrokerDatas: []BrokerData{{Cluster: "DefaultCluster", BrokerName: "broker-a",
			BrokerAddrs: map[int64]string{1: "10.0.0.2:10911", 0: "10.0.0.1:10911"}}},
	}
}

func TestRouteSpecBytes(t *testing.T) {
	const standard = `{"brokerDatas":[{"brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`
	legacy := strings.Replace(standard, `{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"}`, `{0:"10.0.0.1:10911",1:"10.0.0.2:10911"}`, 1)
	r := specRoute()
	if got := string(r.AppendJSON(nil, StandardJSON)); got != standard {
		t.Errorf("standard\n got %s\nwant %s", got, standard)
	}
	if got := string(r.AppendJSON(nil, LegacyJSON)); got != legacy {
		t.Errorf("legacy\n got %s\nwant %s", got, legacy)
	}
}

func richRoute() *TopicRouteData {
	return &TopicRouteData{
		OrderTopicConf: "broker-a:4;broker-b:4",
		QueueDatas: []QueueData{
			{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: PermRead | PermWrite},
			{BrokerName: "broker-b", ReadQueueNums: 8, WriteQueueNums: 8, Perm: PermRead, TopicSysFlag: TopicSysFlagUnit},
			{BrokerName: "代理-c", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6},
		},
		BrokerDatas: []BrokerData{
			{Cluster: "c1", BrokerName: "broker-a", BrokerAddrs: map[int64]string{0: "10.0.0.1:10911", 2: "10.0.0.3:10911", 1: "10.0.0.2:10911"}},
			{Cluster: "c1", BrokerName: "broker-b", BrokerAddrs: map[int64]string{1: "10.0.1.2:10911"}, ZoneName: "zone-b", EnableActingMaster: true},
			{Cluster: "c2", BrokerName: "代理-c", BrokerAddrs: map[int64]string{}},
		},
		FilterServerTable: map[string][]string{"10.0.0.1:10911": {"10.0.0.1:40001", "10.0.0.1:40002"}, "10.0.0.0:1": {}},
	}
}

func TestRouteGolden(t *testing.T) {
	r := richRoute()
	golden(t, "route-standard.json", r.AppendJSON(nil, StandardJSON))
	golden(t, "route-legacy.json", r.AppendJSON(nil, LegacyJSON))
	golden(t, "route-empty.json", (&TopicRouteData{}).AppendJSON(nil, LegacyJSON))
	if got := string((&TopicRouteData{}).AppendJSON(nil, StandardJSON)); got != `{"brokerDatas":[],"filterServerTable":{},"queueDatas":[]}` {
		t.Errorf("empty route = %s", got)
	}
}

func TestRouteDecodesBothForms(t *testing.T) {
	want := richRoute()
	for _, form := range []JSONForm{StandardJSON, LegacyJSON} {
		b := want.AppendJSON(nil, form)
		if form == StandardJSON && !json.Valid(b) {
			t.Errorf("standard form is not valid JSON: %s", b)
		}
		var got TopicRouteData
		if err := Unmarshal(b, &got); err != nil {
			t.Fatalf("form %d: %v", form, err)
		}
		if !reflect.DeepEqual(&got, want) {
			t.Errorf("form %d round trip\n got %+v\nwant %+v", form, got, want)
		}
	}
}

func TestQueueDataOldSpelling(t *testing.T) {
	var q []QueueData
	err := Unmarshal([]byte(`[{"brokerName":"a","perm":6,"readQueueNums":4,"writeQueueNums":4,"topicSynFlag":2},{"brokerName":"b","topicSynFlag":2,"topicSysFlag":1}]`), &q)
	if err != nil {
		t.Fatal(err)
	}
	if q[0].TopicSysFlag != 2 || q[0].Perm != 6 || q[1].TopicSysFlag != 1 {
		t.Errorf("decoded %+v", q)
	}
}

func TestRouteFormFor(t *testing.T) {
	cases := []struct {
		version int
		accept  string
		want    JSONForm
	}{
		{VersionGoClient, "", LegacyJSON},
		{400, "false", LegacyJSON},
		{400, "true", StandardJSON},
		{37, "TRUE", StandardJSON},
		{VersionStandardJSON, "", StandardJSON},
		{VersionCurrent, "false", StandardJSON},
	}
	for _, tc := range cases {
		req := &Command{Version: tc.version}
		if tc.accept != "" {
			req.SetExt("acceptStandardJsonOnly", tc.accept)
		}
		if got := RouteFormFor(req); got != tc.want {
			t.Errorf("version %d accept %q: form %d, want %d", tc.version, tc.accept, got, tc.want)
		}
	}
}

// goClientBrokerAddrs parses brokerAddrs the way rocketmq-client-go does
// (§3.7): take the raw object text, drop its first and last byte, split on
// ',' and then at the first ':', strip '"' from the address; v2.1.2 also
// strips quotes from the key, v2.1.1 does not and falls back to id 0.
func goClientBrokerAddrs(body string, stripKeyQuotes bool) []map[int64]string {
	var out []map[int64]string
	for rest := body; ; {
		i := strings.Index(rest, `"brokerAddrs":`)
		if i < 0 {
			return out
		}
		rest = rest[i+len(`"brokerAddrs":`):]
		raw := rest[:strings.IndexByte(rest, '}')+1]
		m := map[int64]string{}
		for _, kv := range strings.Split(raw[1:len(raw)-1], ",") {
			k, v, _ := strings.Cut(kv, ":")
			if stripKeyQuotes {
				k = strings.ReplaceAll(k, `"`, "")
			}
			id, _ := strconv.ParseInt(k, 10, 64)
			m[id] = strings.ReplaceAll(v, `"`, "")
		}
		out = append(out, m)
	}
}

// Why the legacy form exists: Go clients before v2.1.2 only read it right.
func TestGoClientParsing(t *testing.T) {
	r := specRoute()
	want := r.BrokerDatas[0].BrokerAddrs
	legacy := string(r.AppendJSON(nil, LegacyJSON))
	standard := string(r.AppendJSON(nil, StandardJSON))
	for _, strip := range []bool{false, true} {
		if got := goClientBrokerAddrs(legacy, strip); !reflect.DeepEqual(got[0], want) {
			t.Errorf("legacy body, strip=%v: Go client reads %v", strip, got[0])
		}
	}
	if got := goClientBrokerAddrs(standard, true); !reflect.DeepEqual(got[0], want) {
		t.Errorf("standard body: v2.1.2 reads %v", got[0])
	}
	if got := goClientBrokerAddrs(standard, false); reflect.DeepEqual(got[0], want) {
		t.Error("standard body: expected v2.1.1 to misread quoted keys; the test's model of it is wrong")
	}
}
