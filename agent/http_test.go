package agent_test

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/agenttest"
)

// TestBadInputChangesNothing sends every kind of bad request and checks the
// status, that the message names the problem, and that nothing a client
// registered changed.
func TestBadInputChangesNothing(t *testing.T) {
	c := agenttest.Start(t, 1)
	addr := c.Agent(0).HTTPAddr()
	if status, _ := call(t, "PUT", addr, "/v1/brokers", brokerReg("keep", "10.9.0.1:10911", "Kept"), nil); status != 200 {
		t.Fatal("setup registration failed")
	}
	before := snapshot(t, addr)
	huge := `{"cluster":"c","brokerName":"b","addr":"1.2.3.4:5","topics":{"` + strings.Repeat("x", 1<<20) + `":{}}}`
	cases := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"malformed JSON", "PUT", "/v1/brokers", `{"cluster":`, 400, "malformed JSON"},
		{"not an object", "PUT", "/v1/brokers", `[1,2]`, 400, "request body"},
		{"empty body", "PUT", "/v1/brokers", ``, 400, "body is empty"},
		{"unknown field", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","addr":"1.2.3.4:5","color":"red"}`, 400, `unknown field "color"`},
		{"wrong type", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","brokerId":"zero","addr":"1.2.3.4:5"}`, 400, `"brokerId" must be an integer`},
		{"wrong type in topic", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","addr":"1.2.3.4:5","topics":{"T":{"perm":"rw"}}}`, 400, `perm" must be an integer`},
		{"empty topic", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","addr":"1.2.3.4:5","topics":{"":{"readQueueNums":1}}}`, 400, "topic name must be 1-127 characters"},
		{"bad topic char", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","addr":"1.2.3.4:5","topics":{"a/b":{}}}`, 400, `character '/' is not allowed`},
		{"negative queues", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","addr":"1.2.3.4:5","topics":{"T":{"readQueueNums":-1}}}`, 400, "readQueueNums must be from 0 to 65535"},
		{"bad perm", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","addr":"1.2.3.4:5","topics":{"T":{"perm":99}}}`, 400, "perm must be"},
		{"missing addr", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b"}`, 400, "addr is required"},
		{"bad addr", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","addr":"nohost"}`, 400, `must be host:port`},
		{"negative broker id", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","brokerId":-1,"addr":"1.2.3.4:5"}`, 400, "brokerId must be 0"},
		{"bad ttl", "PUT", "/v1/brokers", `{"cluster":"c","brokerName":"b","addr":"1.2.3.4:5","ttl":"soon"}`, 400, "ttl \"soon\" must be a duration"},
		{"body over 1 MiB", "PUT", "/v1/brokers", huge, 413, "over the 1048576-byte limit"},
		{"bad url", "PUT", "/v1/urls", `{"url":"not a url"}`, 400, "no protocol"},
		{"empty url", "PUT", "/v1/urls", `{"url":""}`, 400, "url is required"},
		{"delete url without url", "DELETE", "/v1/urls", ``, 400, "url query parameter is required"},
		{"unregister unknown", "DELETE", "/v1/brokers/c/nobody/0", ``, 404, "not registered on this agent"},
		{"bad broker id in path", "DELETE", "/v1/brokers/c/b/x", ``, 400, "brokerId \"x\""},
		{"unknown topic", "GET", "/v1/topics/Nope", ``, 404, `no route for topic "Nope"`},
		{"bad index", "GET", "/v1/topics?index=abc", ``, 400, "index \"abc\""},
		{"unknown path", "GET", "/v1/nothing", ``, 404, "no such endpoint"},
		{"wrong method", "POST", "/v1/brokers", `{}`, 405, "use PUT"},
		{"wrong method on get", "DELETE", "/v1/topics", ``, 405, "use GET"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, "http://"+addr+tc.path, strings.NewReader(tc.body))
			if tc.method != "GET" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var body struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("answer is not a JSON error: %q", raw)
			}
			if resp.StatusCode != tc.status || !strings.Contains(body.Error, tc.want) {
				t.Fatalf("got %d %q, want %d containing %q", resp.StatusCode, body.Error, tc.status, tc.want)
			}
		})
	}
	if after := snapshot(t, addr); !reflect.DeepEqual(before, after) {
		t.Fatalf("bad input changed the registry:\nbefore %v\nafter  %v", before, after)
	}
}

// snapshot is everything a client can read from an agent.
func snapshot(t *testing.T, addr string) map[string]any {
	out := map[string]any{}
	for _, p := range []string{"/v1/topics", "/v1/clusters", "/v1/services", "/v1/topics/Kept"} {
		var v any
		call(t, "GET", addr, p, nil, &v)
		out[p] = v
	}
	return out
}
