package agent_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	miekg "github.com/miekg/dns"

	"github.com/namecast/namecast/agent/agenttest"
)

// BenchmarkServiceLookup is one lookup of a service's instances on the
// local agent through each door that answers it: Consul's DNS over UDP
// (a new exchange each time, as a stub resolver does) and over one TCP
// connection, beside Consul's HTTP health query (keep-alive), with n
// brokers registered. It reports the p50 and p99 of the lookups.
//
//	go test -run '^$' -bench ServiceLookup -benchtime 5000x ./agent/
func BenchmarkServiceLookup(b *testing.B) {
	for _, n := range []int{1, 20} {
		c := agenttest.Start(b, 1)
		a := c.Agent(0)
		for i := range n {
			call(b, "PUT", a.HTTPAddr(), "/v1/brokers", brokerReg(fmt.Sprintf("b%d", i), fmt.Sprintf("10.9.%d.%d:10911", i/250, i%250+1), "T"), nil)
		}
		q := new(miekg.Msg)
		q.SetQuestion("rocketmq-broker.service.consul.", miekg.TypeA)
		q.SetEdns0(4096, false)
		udp := &miekg.Client{Net: "udp", Timeout: 5 * time.Second}
		tcp, err := miekg.Dial("tcp", a.Addr("dns"))
		if err != nil {
			b.Fatal(err)
		}
		web := &http.Client{}
		url := "http://" + a.Addr("consul") + "/v1/health/service/rocketmq-broker?passing"
		lookups := map[string]func() int{
			"dns-udp": func() int {
				m, _, err := udp.Exchange(q, a.Addr("dns-udp"))
				if err != nil {
					b.Fatal(err)
				}
				return len(m.Answer)
			},
			"dns-tcp": func() int {
				// The door closes a connection after 128 queries, as
				// Consul's does: the client dials again (counted).
				for range 2 {
					if err := tcp.WriteMsg(q); err == nil {
						if m, err := tcp.ReadMsg(); err == nil {
							return len(m.Answer)
						}
					}
					tcp.Close()
					if tcp, err = miekg.Dial("tcp", a.Addr("dns")); err != nil {
						b.Fatal(err)
					}
				}
				b.Fatal("no answer over TCP")
				return 0
			},
			"consul-http": func() int {
				resp, err := web.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%s: %s", resp.Status, body)
				}
				return n // the body holds every instance; counted by DNS
			},
		}
		for _, name := range []string{"dns-udp", "dns-tcp", "consul-http"} {
			lookup := lookups[name]
			b.Run(fmt.Sprintf("instances=%d/%s", n, name), func(b *testing.B) {
				if got := lookup(); got != n {
					b.Fatalf("%d answers, want %d", got, n)
				}
				var lat []time.Duration
				for b.Loop() {
					start := time.Now()
					lookup()
					lat = append(lat, time.Since(start))
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
		tcp.Close()
		web.CloseIdleConnections()
		c.Close()
	}
}
