package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// call sends one request with a JSON body to s and returns the status and
// the raw body.
func call(t *testing.T, s *Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+s.Addr()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// JSON answers carry & < > as themselves: a Dubbo URL's parameters read
// as written. Before, every & came back as \u0026.
func TestAnswersDoNotEscapeHTML(t *testing.T) {
	s := startLone(t)
	const url = "dubbo://10.0.0.5:20880/com.foo.Bar?side=provider&version=1.0.0"
	if code, body := call(t, s, "PUT", "/v1/urls", `{"url":"`+url+`"}`); code != 200 {
		t.Fatalf("PUT /v1/urls: %d %s", code, body)
	}
	code, body := call(t, s, "GET", "/v1/services/com.foo.Bar", "")
	if code != 200 || !strings.Contains(body, "side=provider&version=1.0.0") || strings.Contains(body, `\u0026`) {
		t.Errorf("GET /v1/services/com.foo.Bar: %d %s", code, body)
	}
}

// PUT /v1/brokers answers what it registered; a slave also learns its
// master. Before, every answer was {"masterAddr":"","haServerAddr":""}.
func TestPutBrokerAnswersWhatWasRegistered(t *testing.T) {
	s := startLone(t)
	code, body := call(t, s, "PUT", "/v1/brokers", `{"cluster":"DefaultCluster","brokerName":"broker-a","brokerId":0,
		"addr":"10.0.0.1:10911","haAddr":"10.0.0.1:10912","ttl":"2m",
		"topics":{"Orders":{"readQueueNums":4,"writeQueueNums":4,"perm":6},"Audit":{"readQueueNums":1,"writeQueueNums":1,"perm":6}}}`)
	if code != 200 {
		t.Fatalf("PUT master: %d %s", code, body)
	}
	var master map[string]any
	if err := json.Unmarshal([]byte(body), &master); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"cluster": "DefaultCluster", "brokerName": "broker-a", "brokerId": 0.0, "addr": "10.0.0.1:10911",
		"haAddr": "10.0.0.1:10912", "topics": []any{"Audit", "Orders"}, "ttl": "2m0s"}
	for k, v := range want {
		if got, _ := json.Marshal(master[k]); string(got) != string(must(json.Marshal(v))) {
			t.Errorf("master's answer %s = %s, want %v (answer %s)", k, got, v, body)
		}
	}
	if _, ok := master["masterAddr"]; ok {
		t.Errorf("a master's answer names a master: %s", body)
	}
	code, body = call(t, s, "PUT", "/v1/brokers", `{"cluster":"DefaultCluster","brokerName":"broker-a","brokerId":1,"addr":"10.0.0.2:10911"}`)
	if code != 200 || !strings.Contains(body, `"masterAddr":"10.0.0.1:10911"`) || !strings.Contains(body, `"haServerAddr":"10.0.0.1:10912"`) ||
		!strings.Contains(body, `"brokerId":1`) || !strings.Contains(body, `"topics":[]`) {
		t.Errorf("PUT slave: %d %s; want its registration and its master", code, body)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
