package consul_test

import (
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/namecast/namecast/agent/agenttest"
)

// The figure for the Consul door (docs/performance.md): a service
// registered through agent A's Consul port, and how long until a blocking
// health query on agent B (consul/api, ?passing, waiting on its index)
// answers with it. Run with:
//
//	go test -run TestFigures -figures -v .
var figures = flag.Bool("figures", false, "run TestFigures (logs the Consul door's figure)")

func TestFigures(t *testing.T) {
	if !*figures {
		t.Skip("the figures run only with -figures (see figures_test.go)")
	}
	const n = 10
	c := agenttest.Start(t, 2)
	a, b := client(t, c, 0), client(t, c, 1)
	var took []time.Duration
	for i := range n {
		name := fmt.Sprintf("fig-%d", i)
		_, meta, err := b.Health().Service(name, "", true, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan time.Time, 1)
		go func() {
			for {
				es, m, err := b.Health().Service(name, "", true, &api.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: time.Minute})
				if err != nil {
					t.Error(err)
					got <- time.Time{}
					return
				}
				if len(es) == 1 {
					got <- time.Now()
					return
				}
				meta = m
			}
		}()
		start := time.Now()
		if err := a.Agent().ServiceRegister(&api.AgentServiceRegistration{Name: name, Port: 80}); err != nil {
			t.Fatal(err)
		}
		end := <-got
		took = append(took, end.Sub(start))
	}
	slices.Sort(took)
	p := func(q float64) time.Duration { return took[min(len(took)-1, int(q*float64(len(took))))] }
	t.Logf("register on A -> blocking ?passing health query on B answered, N=%d: p50 %v, p99 %v (min %v, max %v)",
		n, p(0.50), p(0.99), took[0], took[len(took)-1])
}
