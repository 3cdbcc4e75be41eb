package remoting

import (
	"reflect"
	"testing"
)

func TestSmallBodiesMatchJava(t *testing.T) {
	ci := &ClusterInfo{
		BrokerAddrTable: map[string]BrokerData{"broker-a": {Cluster: "DefaultCluster", BrokerName: "broker-a",
			BrokerAddrs: map[int64]string{0: "10.0.0.1:10911"}}},
		ClusterAddrTable: map[string][]string{"DefaultCluster": {"broker-a"}},
	}
	bmg := &BrokerMemberGroup{Cluster: "DefaultCluster", BrokerName: "broker-a",
		BrokerAddrs: map[int64]string{1: "10.0.0.2:10911", 0: "10.0.0.1:10911"}}
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"cluster info", ci.AppendJSON(nil),
			`{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`},
		{"empty cluster info", (&ClusterInfo{}).AppendJSON(nil), `{"brokerAddrTable":{},"clusterAddrTable":{}}`},
		{"member group", bmg.AppendJSON(nil),
			`{"brokerMemberGroup":{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}}`},
		{"topic list", (&TopicList{Topics: []string{"TBW102", "TopicTest"}}).AppendJSON(nil), `{"topicList":["TBW102","TopicTest"]}`},
		{"system topic list", (&TopicList{Topics: []string{"DefaultCluster", "broker-a"}, BrokerAddr: "10.0.0.1:10911"}).AppendJSON(nil),
			`{"brokerAddr":"10.0.0.1:10911","topicList":["DefaultCluster","broker-a"]}`},
		{"empty topic list", (&TopicList{}).AppendJSON(nil), `{"topicList":[]}`},
		{"kv table", (&KVTable{Table: map[string]string{"TopicTest": "broker-a:4;broker-b:4", "A": "x"}}).AppendJSON(nil),
			`{"table":{"A":"x","TopicTest":"broker-a:4;broker-b:4"}}`},
		{"empty kv table", (&KVTable{}).AppendJSON(nil), `{"table":{}}`},
		{"data version", DataVersion{Counter: 12, Timestamp: 1700000000000}.AppendJSON(nil),
			`{"counter":12,"stateVersion":0,"timestamp":1700000000000}`},
	}
	for _, tc := range cases {
		if string(tc.got) != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
	golden(t, "cluster-info.json", ci.AppendJSON(nil))

	var ci2 ClusterInfo
	if err := Unmarshal(ci.AppendJSON(nil), &ci2); err != nil || !reflect.DeepEqual(&ci2, ci) {
		t.Errorf("cluster info round trip: %v %+v", err, ci2)
	}
	var tl TopicList
	if err := Unmarshal([]byte(`{"brokerAddr":"a:1","topicList":["x"]}`), &tl); err != nil || tl.BrokerAddr != "a:1" || tl.Topics[0] != "x" {
		t.Errorf("topic list: %v %+v", err, tl)
	}
	var dv DataVersion // a 4.x broker's, without stateVersion
	if err := Unmarshal([]byte(`{"counter":7,"timestamp":1690000000000}`), &dv); err != nil || dv != (DataVersion{Counter: 7, Timestamp: 1690000000000}) {
		t.Errorf("4.x data version: %v %+v", err, dv)
	}
}
