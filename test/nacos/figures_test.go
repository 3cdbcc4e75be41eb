package nacos

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	v1model "github.com/nacos-group/nacos-sdk-go/model"
	"github.com/nacos-group/nacos-sdk-go/v2/clients/naming_client/naming_cache"
	"github.com/nacos-group/nacos-sdk-go/v2/clients/naming_client/naming_grpc"
	"github.com/nacos-group/nacos-sdk-go/v2/common/http_agent"
	"github.com/nacos-group/nacos-sdk-go/v2/common/nacos_server"
	"github.com/nacos-group/nacos-sdk-go/v2/model"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
	v1vo "github.com/nacos-group/nacos-sdk-go/vo"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/nacos"
	"github.com/namecast/namecast/internal/testutil"
)

// The figures for the Nacos door, to set beside the ZooKeeper
// door's (docs/bench/history.md, "The ZooKeeper door"). Not part of the
// suite: run it alone,
//
//	go test -run TestFigures -figures -v -timeout 30m .
//
// and read the FIG lines it logs.
var figures = flag.Bool("figures", false, "run TestFigures (a minute or two; logs the Nacos door's figures)")

func TestFigures(t *testing.T) {
	if !*figures {
		t.Skip("the figures run only with -figures (see figures_test.go)")
	}
	c := agenttest.Start(t, 10, agenttest.WithProfile("lan"))
	doors := make([]*nacos.Server, 10)
	for i := range doors {
		s, err := nacos.NewServer(nacos.Config{Addr: "127.0.0.1:0", Host: c.Agent(i).Host(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		doors[i] = s
	}
	figNotify(t, doors, 30)
	figUDPPush(t, doors, 30)
	figQuery(t, doors, 1000, 500)
}

func percentiles(d []time.Duration) string {
	slices.Sort(d)
	p := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	return fmt.Sprintf("p50 %v, p99 %v, max %v (%d)", p(0.50).Round(10*time.Microsecond), p(0.99).Round(10*time.Microsecond),
		d[len(d)-1].Round(10*time.Microsecond), len(d))
}

// figNotify: a provider registers through agent 0; how long until a
// subscriber on agent 9 is called back with it.
func figNotify(t *testing.T, doors []*nacos.Server, trials int) {
	prov, sub := namingClient(t, doors[0]), namingClient(t, doors[len(doors)-1])
	var mu sync.Mutex
	seen := map[uint64]time.Time{}
	err := sub.Subscribe(&vo.SubscribeParam{ServiceName: dubboService, SubscribeCallback: func(insts []model.Instance, _ error) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		for _, in := range insts {
			if _, ok := seen[in.Port]; !ok {
				seen[in.Port] = now
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	var took []time.Duration
	for i := range trials {
		port := uint64(30000 + i)
		start := time.Now()
		if ok, err := prov.RegisterInstance(dubboParam("10.0.0.5", port)); !ok || err != nil {
			t.Fatalf("register: %v %v", ok, err)
		}
		testutil.Eventually(t, 30*time.Second, func() error {
			mu.Lock()
			defer mu.Unlock()
			at, ok := seen[port]
			if !ok {
				return fmt.Errorf("port %d not notified", port)
			}
			took = append(took, at.Sub(start))
			return nil
		})
	}
	t.Logf("FIG register through agent 0 -> subscriber on agent %d called back, N=%d lan: %s", len(doors)-1, len(doors), percentiles(took))
}

// figQuery: a service of n instances registered in one batch through
// agent 0, queried q times one at a time from agent 1.
func figQuery(t *testing.T, doors []*nacos.Server, n, q int) {
	prov := namingClient(t, doors[0])
	insts := make([]vo.RegisterInstanceParam, n)
	for i := range insts {
		insts[i] = dubboParam(fmt.Sprintf("10.1.%d.%d", i/250, i%250), 20880)
	}
	if ok, err := prov.BatchRegisterInstance(vo.BatchRegisterInstanceParam{ServiceName: "providers:bench.Api:1.0.0:", Instances: insts}); !ok || err != nil {
		t.Fatalf("batch register: %v %v", ok, err)
	}
	// The client's own query path (NamingGrpcProxy.QueryInstancesOfService,
	// a ServiceQueryRequest per call): SelectAllInstances would answer
	// from the client's cache after the first call.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cc := clientConfig(t.TempDir())
	srv, err := nacos_server.NewNacosServer(ctx, serverConfigs(t, doors[1]), *cc, &http_agent.HttpAgent{}, 5000, "")
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := naming_grpc.NewNamingGrpcProxy(ctx, *cc, srv, naming_cache.NewServiceInfoHolder("", cc.CacheDir, true, true))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.CloseClient()
	query := func() (int, error) {
		svc, err := proxy.QueryInstancesOfService("providers:bench.Api:1.0.0:", "DEFAULT_GROUP", "", 0, false)
		if err != nil {
			return 0, err
		}
		return len(svc.Hosts), nil
	}
	testutil.Eventually(t, 30*time.Second, func() error {
		got, err := query()
		if err != nil || got != n {
			return fmt.Errorf("%d instances on agent 1, %v", got, err)
		}
		return nil
	})
	took := make([]time.Duration, 0, q)
	start := time.Now()
	for range q {
		t0 := time.Now()
		if _, err := query(); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(t0))
	}
	t.Logf("FIG instance list of %d providers from agent 1, one at a time (nacos-sdk-go ServiceQueryRequest): %s, %.0f ops/s",
		n, percentiles(took), float64(q)/time.Since(start).Seconds())
}

// figUDPPush: figNotify for a 1.x subscriber: nacos-sdk-go v1 on agent 9,
// pushed over UDP (udp_test.go), called back with each provider
// registered through agent 0 (nacos-sdk-go v2).
func figUDPPush(t *testing.T, doors []*nacos.Server, trials int) {
	prov, sub := namingClient(t, doors[0]), namingClientV1(t, doors[len(doors)-1])
	var mu sync.Mutex
	seen := map[uint64]time.Time{}
	err := sub.Subscribe(&v1vo.SubscribeParam{ServiceName: "providers:udp.Api:1.0.0:", SubscribeCallback: func(svcs []v1model.SubscribeService, _ error) {
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		for _, in := range svcs {
			if _, ok := seen[in.Port]; !ok {
				seen[in.Port] = now
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	var took []time.Duration
	for i := range trials {
		port := uint64(31000 + i)
		p := dubboParam("10.0.0.6", port)
		p.ServiceName = "providers:udp.Api:1.0.0:"
		start := time.Now()
		if ok, err := prov.RegisterInstance(p); !ok || err != nil {
			t.Fatalf("register: %v %v", ok, err)
		}
		testutil.Eventually(t, 30*time.Second, func() error {
			mu.Lock()
			defer mu.Unlock()
			at, ok := seen[port]
			if !ok {
				return fmt.Errorf("port %d not pushed", port)
			}
			took = append(took, at.Sub(start))
			return nil
		})
	}
	t.Logf("FIG register through agent 0 -> 1.x subscriber (nacos-sdk-go v1, UDP push) on agent %d called back, N=%d lan: %s", len(doors)-1, len(doors), percentiles(took))
}
