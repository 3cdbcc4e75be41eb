package zookeeper

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent"
)

// A delete and re-create of the same ephemeral node on one agent (what
// curator-x-discovery and dubbo-go do on every reconnect) shows other
// agents no gap: their watches do not fire.
func TestDeleteRecreateShowsNoGap(t *testing.T) {
	// A hold far above a loaded CI machine's pause between two requests.
	c := cluster(t, 2, func(cfg *agent.Config) { cfg.ZooKeeperDeleteHold = agent.Duration(5 * time.Second) })
	p := connect(t, zkAddr(t, c, 0), 10*time.Second)
	w := connect(t, zkAddr(t, c, 1), 10*time.Second)
	mkdirs(t, p, "/services/demo")
	node := "/services/demo/10.0.0.5:20880"
	if _, err := p.Create(node, []byte(`{"id":1}`), zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { _, _, err := w.Get(node); return err })
	_, _, ch, err := w.ChildrenW("/services/demo")
	if err != nil {
		t.Fatal(err)
	}
	_, _, ex, err := w.ExistsW(node)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := p.Delete(node, -1); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Create(node, []byte(`{"id":1}`), zk.FlagEphemeral, acl); err != nil {
			t.Fatal(err)
		}
	}
	noEvent(t, ch, time.Second)
	noEvent(t, ex, 10*time.Millisecond)
	if _, _, err := w.Get(node); err != nil {
		t.Fatalf("after the re-creates: %v", err)
	}
}

// Persistent znodes are cluster rules: they outlive the agent that wrote
// them (its ephemeral ones do not), and a dynamic=false URL is one too.
func TestPersistentNodesOutliveTheirWriter(t *testing.T) {
	c := cluster(t, 3)
	a := connect(t, zkAddr(t, c, 2), 10*time.Second)
	mkdirs(t, a, "/dubbo/config/dubbo")
	if _, err := a.Create("/dubbo/config/dubbo/demo.configurators", []byte("rule"), 0, acl); err != nil {
		t.Fatal(err)
	}
	mkdirs(t, a, "/dubbo/demo.Api/configurators")
	override := "override://0.0.0.0/demo.Api?category=configurators&dynamic=false&timeout=300"
	if _, err := a.Create("/dubbo/demo.Api/configurators/"+javaEncode(override), nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	mkdirs(t, a, "/services/gone")
	if _, err := a.Create("/services/gone/1", nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	b := connect(t, zkAddr(t, c, 0), 10*time.Second)
	eventually(t, 10*time.Second, func() error { return hasChild(b, "/services/gone", "1") })
	eventually(t, 10*time.Second, func() error { return hasChild(b, "/dubbo/demo.Api/configurators", javaEncode(override)) })
	c.Crash(2)
	eventually(t, 30*time.Second, func() error {
		if ok, _, _ := b.Exists("/services/gone/1"); ok {
			return fmt.Errorf("the crashed agent's ephemeral node is still listed")
		}
		return nil
	})
	data, _, err := b.Get("/dubbo/config/dubbo/demo.configurators")
	if err != nil || string(data) != "rule" {
		t.Fatalf("config after its writer died: %q %v", data, err)
	}
	if err := hasChild(b, "/dubbo/demo.Api/configurators", javaEncode(override)); err != nil {
		t.Fatalf("dynamic=false URL after its writer died: %v", err)
	}
}

// Concurrent service-name mapping CAS from clients on two agents (Dubbo's
// MetadataServiceNameMapping loop) converges to the union of every
// application, on every agent.
func TestMappingMergedAsSet(t *testing.T) {
	c := cluster(t, 2)
	const path = "/dubbo/mapping/demo.Api"
	clients := []*client{connect(t, zkAddr(t, c, 0), 10*time.Second), connect(t, zkAddr(t, c, 1), 10*time.Second)}
	mkdirs(t, clients[0], "/dubbo/mapping")
	eventually(t, 10*time.Second, func() error { _, _, err := clients[1].Get("/dubbo/mapping"); return err })
	var wg sync.WaitGroup
	var want []string
	for i := 0; i < 20; i++ {
		app := fmt.Sprintf("app%02d", i)
		want = append(want, app)
		cl := clients[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for try := 0; try < 50; try++ {
				data, st, err := cl.Get(path)
				switch {
				case err == zk.ErrNoNode:
					_, err = cl.Create(path, []byte(app), 0, acl)
				case err == nil && strings.Contains(","+string(data)+",", ","+app+","):
					return
				case err == nil:
					_, err = cl.Set(path, []byte(string(data)+","+app), st.Version)
				}
				if err == nil {
					return
				}
				time.Sleep(time.Duration(try) * time.Millisecond)
			}
			t.Errorf("%s never mapped", app)
		}()
	}
	wg.Wait()
	sort.Strings(want)
	for i, cl := range clients {
		eventually(t, 10*time.Second, func() error {
			data, _, err := cl.Get(path)
			if err != nil {
				return err
			}
			got := strings.Split(string(data), ",")
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				return fmt.Errorf("agent %d maps %s", i, data)
			}
			return nil
		})
	}
}

// The door's metrics are in the agent's Prometheus registry.
func TestMetrics(t *testing.T) {
	c := cluster(t, 1)
	cl := connect(t, zkAddr(t, c, 0), 10*time.Second)
	cl.Exists("/")
	cl.Get("/nope")
	eventually(t, 10*time.Second, func() error {
		resp, err := http.Get("http://" + c.Agent(0).HTTPAddr() + "/metrics")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, want := range []string{"namecast_zookeeper_sessions 1", `namecast_zookeeper_requests_total{err="nonode",op="getData"}`,
			"namecast_zookeeper_watches", `namecast_zookeeper_latency_seconds`} {
			if !strings.Contains(string(b), want) {
				return fmt.Errorf("no %s in /metrics", want)
			}
		}
		return nil
	})
}
