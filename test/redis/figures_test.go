package redis_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/zookeeper"
)

// The figure: a Dubbo provider's register and unregister through
// the Redis door of agent A, to the pmessage on a pattern subscriber of
// agent B, beside the same change through the ZooKeeper door (create or
// delete of the URL znode through A, to a child watch firing on B), in
// the same cluster and run. Changes are spaced 0.3-0.8 s apart, as the
// ZooKeeper figure and P1 space theirs. Not part of the suite:
//
//	cd test/redis && go test -run TestFigures -figures -v .
//
// and read the FIG lines it logs (docs/performance.md has them).
var (
	figures        = flag.Bool("figures", false, "run TestFigures (minutes; logs the Redis door's figures)")
	figuresN       = flag.Int("figures.n", 10, "cluster size")
	figuresTrials  = flag.Int("figures.trials", 100, "changes timed per kind")
	figuresProfile = flag.String("figures.profile", "lan", "timing profile of the cluster")
)

type dist []time.Duration

func (d dist) pct(p float64) time.Duration {
	s := append(dist(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func (d dist) String() string {
	return fmt.Sprintf("n=%d p50=%v p99=%v max=%v", len(d), d.pct(0.5).Round(10*time.Microsecond),
		d.pct(0.99).Round(10*time.Microsecond), d.pct(1).Round(10*time.Microsecond))
}

func figProvider(iface string, i int) string {
	return fmt.Sprintf("dubbo://10.%d.%d.%d:20880/%s?anyhost=true&application=demo-provider&deprecated=false&dubbo=2.0.2"+
		"&dynamic=true&generic=false&interface=%s&methods=sayHello,sayHelloAsync&pid=%d&release=3.3.1&side=provider&timestamp=1735689600000",
		i/65536, i/256%256, i%256, iface, iface, 1000+i)
}

func pause() { time.Sleep(300*time.Millisecond + rand.N(500*time.Millisecond)) }

func TestFigures(t *testing.T) {
	if !*figures {
		t.Skip("the figures run only with -figures (see figures_test.go)")
	}
	n := *figuresN
	c := agenttest.Start(t, n, withRedis, agenttest.WithProfile(*figuresProfile))
	c.WaitMembers(n)
	ctx := t.Context()
	a, b := c.Agent(0), c.Agent(n-1)

	const redisIface, zkIface = "org.apache.dubbo.demo.RedisService", "org.apache.dubbo.demo.ZkService"
	key := "/dubbo/" + redisIface + "/providers"
	ra := goRedis(t, a.Addr("redis"))
	rb := goRedis(t, b.Addr("redis"))
	ps := rb.PSubscribe(ctx, "/dubbo/"+redisIface+"/*")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := ps.Channel()

	za, zb := zkConn(t, a.Addr("zookeeper")), zkConn(t, b.Addr("zookeeper"))
	root := "/dubbo/" + zkIface + "/providers"
	for _, p := range []string{"/dubbo", "/dubbo/" + zkIface, root} {
		za.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
	}
	// A deliberate unregister is withdrawn at once only from a session
	// older than the door's RecreateWindow (agent/zookeeper), as a
	// provider's is when it shuts down.
	time.Sleep(zookeeper.DefaultRecreateWindow)

	var hset, hdel, create, del dist
	wait := func(what, payload string, start time.Time) time.Duration {
		select {
		case m := <-msgs:
			if m.Payload != payload {
				t.Fatalf("%s: got %q", what, m.Payload)
			}
			return time.Since(start)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no pmessage on B within 30 s", what)
		}
		return 0
	}
	watch := func(what string, w <-chan zk.Event, start time.Time) time.Duration {
		select {
		case <-w:
			return time.Since(start)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no child watch on B within 30 s", what)
		}
		return 0
	}
	for i := range *figuresTrials {
		u := figProvider(redisIface, i)
		pause()
		s := time.Now()
		if err := ra.HSet(ctx, key, u, expiry(time.Minute)).Err(); err != nil {
			t.Fatal(err)
		}
		hset = append(hset, wait("HSET", "register", s))
		pause()
		s = time.Now()
		if err := ra.HDel(ctx, key, u).Err(); err != nil {
			t.Fatal(err)
		}
		hdel = append(hdel, wait("HDEL", "unregister", s))

		p := root + "/" + url.QueryEscape(figProvider(zkIface, i))
		pause()
		_, _, w, err := zb.ChildrenW(root)
		if err != nil {
			t.Fatal(err)
		}
		s = time.Now()
		if _, err := za.Create(p, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		create = append(create, watch("create", w, s))
		pause()
		if _, _, w, err = zb.ChildrenW(root); err != nil {
			t.Fatal(err)
		}
		s = time.Now()
		if err := za.Delete(p, -1); err != nil {
			t.Fatal(err)
		}
		del = append(del, watch("delete", w, s))
	}
	t.Logf("FIG redis N=%d %s: HSET through A -> pmessage register on B: %v", n, *figuresProfile, hset)
	t.Logf("FIG redis N=%d %s: HDEL through A -> pmessage unregister on B: %v", n, *figuresProfile, hdel)
	t.Logf("FIG zookeeper N=%d %s: create through A -> child watch on B: %v", n, *figuresProfile, create)
	t.Logf("FIG zookeeper N=%d %s: delete through A -> child watch on B: %v", n, *figuresProfile, del)
}

func zkConn(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, ev, err := zk.Connect([]string{addr}, 30*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	for e := range ev {
		if e.State == zk.StateHasSession {
			break
		}
	}
	return c
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}
