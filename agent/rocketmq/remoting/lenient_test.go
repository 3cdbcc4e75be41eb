package remoting

import (
	"encoding/json"
	"testing"
)

func TestQuoteNumericKeys(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{0:"a",1:"b"}`, `{"0":"a","1":"b"}`},
		{`{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a"}`,
			`{"brokerAddrs":{"0":"10.0.0.1:10911","1":"10.0.0.2:10911"},"brokerName":"broker-a"}`},
		{`{-1:"x",12345678901234567890:"y"}`, `{"-1":"x","12345678901234567890":"y"}`},
		{"{ 0 : \"a\" ,\n\t12 :\"b\"}", "{ \"0\" : \"a\" ,\n\t\"12\" :\"b\"}"},
		{`{0:{1:{2:"x"}}}`, `{"0":{"1":{"2":"x"}}}`},
		{`{"currIdMap":{0:0,1:1},"n":2}`, `{"currIdMap":{"0":0,"1":1},"n":2}`},
		{`[{0:1},2,{3:[4,5]}]`, `[{"0":1},2,{"3":[4,5]}]`},
		// Left alone: values, strings, floats, and anything not a key.
		{`{"a":1,"b":-2,"c":[1,2,3]}`, `{"a":1,"b":-2,"c":[1,2,3]}`},
		{`{"s":"{0:1,2:3}"}`, `{"s":"{0:1,2:3}"}`},
		{`{"s":"a\"{0:1","t":"\\"}`, `{"s":"a\"{0:1","t":"\\"}`},
		{`{"k":"v",0:"x"}`, `{"k":"v","0":"x"}`},
		{`{1.5:"x"}`, `{1.5:"x"}`},
		{`{1e3:"x"}`, `{1e3:"x"}`},
		{`{-:"x"}`, `{-:"x"}`},
		{`{0}`, `{0}`},
		{`[1,2:3]`, `[1,"2":3]`},
		// Truncated or broken input survives.
		{`{0`, `{0`},
		{`{0:`, `{"0":`},
		{`{"open:{0:1}`, `{"open:{0:1}`},
		{`"\`, `"\`},
		{"", ""},
		{"\xff{0:\xfe}", "\xff{\"0\":\xfe}"},
	}
	for _, tc := range cases {
		if got := string(QuoteNumericKeys([]byte(tc.in))); got != tc.want {
			t.Errorf("QuoteNumericKeys(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestQuoteNumericKeysValidJSONIsFree(t *testing.T) {
	in := []byte(registerBody5x)
	allocs := testing.AllocsPerRun(100, func() {
		out := QuoteNumericKeys(in)
		if &out[0] != &in[0] || len(out) != len(in) {
			t.Fatal("valid JSON was copied")
		}
	})
	if allocs != 0 {
		t.Errorf("%.0f allocations for valid JSON", allocs)
	}
}

func TestUnmarshalFastjson(t *testing.T) {
	const clusterInfo = `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster","enableActingMaster":false}},"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`
	if json.Valid([]byte(clusterInfo)) {
		t.Fatal("fixture should not be valid JSON")
	}
	var ci ClusterInfo
	if err := Unmarshal([]byte(clusterInfo), &ci); err != nil {
		t.Fatal(err)
	}
	bd := ci.BrokerAddrTable["broker-a"]
	if bd.BrokerAddrs[0] != "10.0.0.1:10911" || bd.BrokerAddrs[1] != "10.0.0.2:10911" || ci.ClusterAddrTable["DefaultCluster"][0] != "broker-a" {
		t.Errorf("decoded %+v", ci)
	}
}
