package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/namecast/namecast/routes"
)

// TestRulesListsEveryRuleRecord: /v1/rules lists every record the Overview
// counts as a rule (the "~rules" origin's records), persistent znodes
// included, and gives Lamport times as strings, which JavaScript reads
// exactly. Before, znodes such as /dubbo/mapping/* were counted but not
// listed, and times passed 2^53 as JSON numbers.
func TestRulesListsEveryRuleRecord(t *testing.T) {
	s := startLone(t)
	tbl := s.table
	if _, ok := tbl.ApplyRules([]routes.Record{
		{URL: &routes.URL{Interface: "com.example.S", Category: "configurators",
			URL: "override://0.0.0.0/com.example.S?category=configurators&dynamic=false&timeout=1"}},
		{KV: &routes.KV{Namespace: "ORDER_TOPIC_CONFIG", Key: "T", Value: "broker-a:4"}},
		{Znode: &routes.Znode{Path: "/dubbo/mapping/com.example.S", Part: "lone", Data: []byte("greeter-app"), Mtime: 1764900000000}},
	}, nil); !ok {
		t.Fatal("ApplyRules applied nothing")
	}
	counted := 0
	for _, o := range tbl.OriginStats() {
		if o.Origin == routes.RulesOrigin {
			counted = o.Records
		}
	}

	res, err := http.Get("http://" + s.Addr() + "/v1/rules")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var got struct {
		Rules []map[string]any `json:"rules"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if counted != 3 || len(got.Rules) != counted {
		t.Fatalf("/v1/rules lists %d rules, the ~rules origin counts %d, want 3 and 3: %s", len(got.Rules), counted, raw)
	}
	kinds := map[string]map[string]any{}
	for _, r := range got.Rules {
		kinds[r["kind"].(string)] = r
		ts, ok := r["time"].(string)
		if _, err := strconv.ParseUint(ts, 10, 64); !ok || err != nil {
			t.Errorf("time %#v is not a decimal string", r["time"])
		}
	}
	z := kinds["znode"]
	if z == nil || z["path"] != "/dubbo/mapping/com.example.S" || z["data"] != "greeter-app" || z["mtime"] != float64(1764900000000) {
		t.Errorf("znode rule: %v", z)
	}
	if kinds["url"] == nil || kinds["kv"] == nil {
		t.Errorf("kinds listed: %v", kinds)
	}
}
