package agent_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/nacos/nacostest"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/testutil"
)

// The records an agent holds for its clients are bounded (--max-records,
// --max-records-mib), through every door: past the bound a write is
// refused with the door's own error naming the flag, nothing of it is
// applied, and a delete (then a write again) still works. Before, 12,000
// HTTP registrations of 8 KB were all accepted and served by every agent
// (issue 34, item 1).
func TestRecordBudgetThroughEveryDoor(t *testing.T) {
	const max = 4
	start := func(t *testing.T) *agent.Agent {
		return agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.MaxRecords = max }).Agent(0)
	}
	held := func(a *agent.Agent) int { return a.Table().Usage(a.Table().Local()).Records }

	t.Run("HTTP", func(t *testing.T) {
		a := start(t)
		reg := func(i int) (int, string) {
			u := fmt.Sprintf("dubbo://10.0.0.%d:20880/com.example.Budget?version=1", i)
			b := fmt.Sprintf(`{"url":%q}`, u)
			req, _ := http.NewRequest("PUT", "http://"+a.HTTPAddr()+"/v1/urls", strings.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		for i := range max {
			if code, body := reg(i); code != 200 {
				t.Fatalf("registration %d within the budget: %d %s", i, code, body)
			}
		}
		if code, body := reg(max); code != http.StatusInsufficientStorage || !strings.Contains(body, "--max-records") {
			t.Fatalf("registration past the budget: %d %s, want 507 naming --max-records", code, body)
		}
		if n := held(a); n != max {
			t.Fatalf("the agent holds %d records, want %d", n, max)
		}
		if code, body := reg(0); code != 200 {
			t.Fatalf("re-registering a held URL at the budget: %d %s", code, body)
		}
		u := url.QueryEscape("dubbo://10.0.0.0:20880/com.example.Budget?version=1")
		if status, _ := call(t, "DELETE", a.HTTPAddr(), "/v1/urls?url="+u, nil, nil); status != 200 {
			t.Fatalf("unregistering at the budget: %d", status)
		}
		if code, body := reg(max); code != 200 {
			t.Fatalf("registration after a delete made room: %d %s", code, body)
		}
	})

	t.Run("RocketMQ", func(t *testing.T) {
		a := start(t)
		cl, err := rocketmqtest.Dial(a.Addr("rocketmq"))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		// A broker record and one queue record per topic: 1 + max topics
		// pass the budget, and none of them is applied.
		topics := map[string]remoting.TopicConfig{}
		for i := range max {
			name := fmt.Sprintf("T%d", i)
			topics[name] = rocketmqtest.Topic(name, 4)
		}
		b := &rocketmqtest.Broker{Cluster: "c", Name: "broker-a", Addr: "10.0.0.1:10911", Topics: topics}
		resp, err := cl.Register(b)
		if err == nil || resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "--max-records") {
			t.Fatalf("a registration past the budget answered %v (%v), want SYSTEM_ERROR naming --max-records", resp, err)
		}
		if n := held(a); n != 0 {
			t.Fatalf("a refused registration left %d records", n)
		}
		delete(topics, "T0")
		if _, err := cl.Register(b); err != nil {
			t.Fatalf("a registration within the budget: %v", err)
		}
		if n := held(a); n != max {
			t.Fatalf("the agent holds %d records, want %d", n, max)
		}
	})

	t.Run("ZooKeeper", func(t *testing.T) {
		a := start(t)
		zk := dialZK(t, a.Addr("zookeeper"))
		acl := []zkwire.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}
		if code := zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: "/budget", ACL: acl}); code != 0 {
			t.Fatalf("create /budget: %d", code)
		}
		create := func(i int) int32 {
			return zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: fmt.Sprintf("/budget/n%d", i), Data: []byte("x"), ACL: acl, Flags: zkwire.FlagEphemeral})
		}
		for i := range max {
			if code := create(i); code != 0 {
				t.Fatalf("ephemeral %d within the budget: %d", i, code)
			}
		}
		if code := create(max); code != zkwire.ErrQuotaExceeded {
			t.Fatalf("ephemeral past the budget: %d, want QUOTAEXCEEDED (%d)", code, zkwire.ErrQuotaExceeded)
		}
		if code := zk.call(zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/budget/n1", Data: []byte("y"), Version: -1}); code != 0 {
			t.Fatalf("setData of the same size at the budget: %d", code)
		}
		if code := zk.call(zkwire.OpDelete, &zkwire.PathVersion{Path: "/budget/n0", Version: -1}); code != 0 {
			t.Fatalf("delete at the budget: %d", code)
		}
		// The delete is held back (zookeeper_delete_hold) before the
		// record goes, and with it the room.
		testutil.Eventually(t, 10*time.Second, func() error {
			if code := create(max); code != 0 {
				return fmt.Errorf("ephemeral after a delete made room: %d", code)
			}
			return nil
		})
		if n := held(a); n != max {
			t.Fatalf("the agent holds %d records, want %d", n, max)
		}
	})

	inst := func(i int) nacoswire.Instance {
		return nacoswire.Instance{IP: fmt.Sprintf("10.0.1.%d", i), Port: 20880, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true,
			Metadata: map[string]string{"interface": "com.example.Budget", "version": "1.0.0", "side": "provider"}}
	}
	const service = "providers:com.example.Budget:1.0.0:"

	t.Run("NacosGRPC", func(t *testing.T) {
		a := start(t)
		var conns []*nacostest.Client
		for i := range max {
			nc := nacostest.Dial(t, a.Addr("nacos-grpc"))
			conns = append(conns, nc)
			if err := nc.Register(service, inst(i)); err != nil {
				t.Fatalf("instance %d within the budget: %v", i, err)
			}
		}
		nc := nacostest.Dial(t, a.Addr("nacos-grpc"))
		err := nc.Register(service, inst(max))
		if err == nil || !strings.Contains(err.Error(), "--max-records") || !strings.Contains(err.Error(), fmt.Sprint(nacoswire.ErrOverThreshold)) {
			t.Fatalf("instance past the budget: %v, want OVER_THRESHOLD naming --max-records", err)
		}
		if err := conns[0].Deregister(service, inst(0)); err != nil {
			t.Fatalf("deregister at the budget: %v", err)
		}
		if err := nc.Register(service, inst(max)); err != nil {
			t.Fatalf("instance after a deregister made room: %v", err)
		}
	})

	t.Run("Nacos1xHTTP", func(t *testing.T) {
		a := start(t)
		base := "http://" + a.Addr("nacos") + "/nacos/v1/ns/instance"
		healthy := "true"
		send := func(method string, i int) (int, string) {
			v := url.Values{"serviceName": {service}, "ip": {fmt.Sprintf("10.0.2.%d", i)}, "port": {"20880"}, "healthy": {healthy},
				"metadata": {`{"interface":"com.example.Budget","version":"1.0.0","side":"provider"}`}}
			req, _ := http.NewRequest(method, base+"?"+v.Encode(), nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			return resp.StatusCode, buf.String()
		}
		for i := range max {
			if code, body := send("POST", i); code != 200 {
				t.Fatalf("instance %d within the budget: %d %s", i, code, body)
			}
		}
		if code, body := send("POST", max); code == 200 || !strings.Contains(body, "--max-records") {
			t.Fatalf("instance past the budget: %d %s, want an error naming --max-records", code, body)
		}
		if code, body := send("DELETE", 0); code != 200 {
			t.Fatalf("deregister at the budget: %d %s", code, body)
		}
		if code, body := send("POST", max); code != 200 {
			t.Fatalf("instance after a deregister made room: %d %s", code, body)
		}
		// At the budget, an instance marked unhealthy is one record in
		// place of another (its URL carries nacos.healthy=false, so its
		// key changes): what its lease stops covering is freed.
		healthy = "false"
		if code, body := send("POST", 1); code != 200 {
			t.Fatalf("instance marked unhealthy at the budget: %d %s", code, body)
		}
		if n := held(a); n != max {
			t.Fatalf("%d records held after the swap, want %d", n, max)
		}
	})
}

// The budget in bytes (--max-records-mib) refuses a write that grows the
// agent's records past it, naming the flag, and lets a replacement no
// larger through.
func TestRecordBudgetInBytes(t *testing.T) {
	c := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.MaxRecordsMiB = 1 })
	a := c.Agent(0)
	pad := strings.Repeat("a", 7<<10)
	reg := func(i int) error {
		_, err := agent.Door[*httpapi.Server](a).RegisterURL(fmt.Sprintf("dubbo://10.0.%d.%d:20880/com.example.Big?pad=%s", i/250, i%250, pad), 0)
		return err
	}
	n := 0
	for ; n < 200; n++ {
		if err := reg(n); err != nil {
			if !strings.Contains(err.Error(), "--max-records-mib") {
				t.Fatalf("URL %d refused with %v, want an error naming --max-records-mib", n, err)
			}
			break
		}
	}
	if n < 100 || n == 200 {
		t.Fatalf("%d URLs of 7 KiB accepted within 1 MiB", n)
	}
	if u := a.Table().Usage(a.Table().Local()); u.Bytes > 1<<20 || u.Records != n {
		t.Fatalf("the agent holds %+v after %d accepted", u, n)
	}
	if err := reg(0); err != nil {
		t.Fatalf("re-registering a held URL at the budget: %v", err)
	}
}

// A receiving agent holds no more of one origin than its budget: an
// agent given a larger one (or a faulty one) that registers past it is
// held by none of the others, the same on each, and once it is back
// within the budget every agent holds its records again. Before, every
// agent held whatever another sent it.
func TestReceivingAgentsRefuseAnOriginPastTheBudget(t *testing.T) {
	c := agenttest.Start(t, 3, func(cfg *agent.Config) {
		cfg.MaxRecords = 3
		if cfg.NodeName == "agent-0" {
			cfg.MaxRecords = 100
		}
	})
	a := c.Agent(0)
	u := func(i int) string { return fmt.Sprintf("dubbo://10.0.3.%d:20880/com.example.Faulty?version=1", i) }
	for i := range 5 {
		if _, err := agent.Door[*httpapi.Server](a).RegisterURL(u(i), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{1, 2} {
		testutil.Eventually(t, 20*time.Second, func() error {
			tb := c.Agent(i).Table()
			if r, ok := tb.Refused("agent-0"); !ok || r.Usage.Records != 5 || tb.Usage("agent-0").Records != 0 {
				return fmt.Errorf("agent %d: refusal %+v %v, holds %+v of agent-0", i, r, ok, tb.Usage("agent-0"))
			}
			if urls := tb.URLs("com.example.Faulty", "providers"); len(urls) != 0 {
				return fmt.Errorf("agent %d serves %v", i, urls)
			}
			return nil
		})
	}
	for i := range 3 {
		if _, err := agent.Door[*httpapi.Server](a).UnregisterURL(u(i)); err != nil {
			t.Fatal(err)
		}
	}
	want := a.Table().URLs("com.example.Faulty", "providers")
	if len(want) != 2 {
		t.Fatalf("agent-0 serves %v", want)
	}
	for _, i := range []int{1, 2} {
		testutil.Eventually(t, 20*time.Second, func() error {
			tb := c.Agent(i).Table()
			if got := tb.URLs("com.example.Faulty", "providers"); !slices.Equal(got, want) {
				return fmt.Errorf("agent %d serves %v, want %v", i, got, want)
			}
			if _, ok := tb.Refused("agent-0"); ok {
				return fmt.Errorf("agent %d still refuses agent-0", i)
			}
			return nil
		})
	}
	if err := c.Converged(); err != nil {
		t.Fatal(err)
	}
}
