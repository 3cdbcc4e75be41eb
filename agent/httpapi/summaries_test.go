package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"
)

func putJSON(t *testing.T, addr, path, body string) {
	t.Helper()
	req, _ := http.NewRequest("PUT", "http://"+addr+path, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("PUT %s: %d %s", path, res.StatusCode, raw)
	}
}

func getJSON(t *testing.T, addr, path string, v any) {
	t.Helper()
	res, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// TestListDetails: ?detail gives the list pages their columns — per topic
// its clusters, broker groups, queues and permissions; per interface its
// provider and consumer counts, applications and versions — and without
// it the lists stay bare names.
func TestListDetails(t *testing.T) {
	s := startLone(t)
	a := s.Addr()
	putJSON(t, a, "/v1/brokers", `{"cluster":"C1","brokerName":"broker-a","addr":"192.0.2.1:10911","topics":{"Orders":{"readQueueNums":4,"writeQueueNums":4,"perm":6}}}`)
	putJSON(t, a, "/v1/brokers", `{"cluster":"C2","brokerName":"broker-b","addr":"192.0.2.2:10911","topics":{"Orders":{"readQueueNums":8,"writeQueueNums":2,"perm":4}}}`)
	putJSON(t, a, "/v1/urls", `{"url":"dubbo://192.0.2.10:20880/com.example.S?application=app-a&version=1.0&side=provider"}`)
	putJSON(t, a, "/v1/urls", `{"url":"dubbo://192.0.2.11:20880/com.example.S?application=app-b&version=2.0&side=provider"}`)
	putJSON(t, a, "/v1/urls", `{"url":"consumer://192.0.2.12/com.example.S?category=consumers&application=web&version=2.0&side=consumer"}`)
	putJSON(t, a, "/v1/urls", `{"url":"override://0.0.0.0/com.example.S?category=configurators&dynamic=false&application=ops"}`)

	var topics struct{ Topics []TopicSummary }
	getJSON(t, a, "/v1/topics?detail", &topics)
	want := TopicSummary{Topic: "Orders", Clusters: []string{"C1", "C2"}, Brokers: []string{"broker-a", "broker-b"},
		ReadQueues: 12, WriteQueues: 6, Perms: []int{4, 6}}
	if len(topics.Topics) != 1 || !reflect.DeepEqual(topics.Topics[0], want) {
		t.Errorf("topics?detail = %+v, want [%+v]", topics.Topics, want)
	}
	var services struct{ Services []ServiceSummary }
	getJSON(t, a, "/v1/services?detail", &services)
	wantS := ServiceSummary{Interface: "com.example.S", Providers: 2, Consumers: 1,
		Applications: []string{"app-a", "app-b", "web"}, Versions: []string{"1.0", "2.0"}}
	if len(services.Services) != 1 || !reflect.DeepEqual(services.Services[0], wantS) {
		t.Errorf("services?detail = %+v, want [%+v]", services.Services, wantS)
	}
	// An interface exported only by a Dubbo 3 application is listed, its
	// instances counted.
	if code, out, _ := doJSON(t, "PUT", "http://"+a+"/v1/apps/greeter/instances",
		`{"address":"192.0.2.20","port":20000,"interfaces":["com.example.G","com.example.S"],"ttl":"1m"}`); code != 200 {
		t.Fatalf("PUT instance: %d %v", code, out)
	}
	getJSON(t, a, "/v1/services?detail", &services)
	wantS.AppInstances, wantS.Applications = 1, []string{"app-a", "app-b", "greeter", "web"}
	wantG := ServiceSummary{Interface: "com.example.G", AppInstances: 1, Applications: []string{"greeter"}, Versions: []string{}}
	if !reflect.DeepEqual(services.Services, []ServiceSummary{wantG, wantS}) {
		t.Errorf("services?detail with an application = %+v, want %+v", services.Services, []ServiceSummary{wantG, wantS})
	}
	var bare struct{ Topics, Services []string }
	getJSON(t, a, "/v1/topics", &bare)
	getJSON(t, a, "/v1/services", &bare)
	if !reflect.DeepEqual(bare.Topics, []string{"Orders"}) || !reflect.DeepEqual(bare.Services, []string{"com.example.S"}) {
		t.Errorf("bare lists: %+v", bare)
	}
}
