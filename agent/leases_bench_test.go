package agent_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/httpapi"
)

// BenchmarkDurableRegistration is the price of a registration's answer
// waiting for the data dir (PutLease writes a new lease before returning):
// one new Dubbo URL with a TTL, with held other registrations already on
// this agent, against an agent without a data dir.
//
//	go test -run '^$' -bench DurableRegistration -benchtime 200x ./agent/
func BenchmarkDurableRegistration(b *testing.B) {
	for _, held := range []int{0, 1000, 5000} {
		for _, durable := range []bool{false, true} {
			name := fmt.Sprintf("held=%d/data-dir=%v", held, durable)
			b.Run(name, func(b *testing.B) {
				var opts []agenttest.Option
				if durable {
					opts = append(opts, agenttest.WithDataDirs(b.TempDir()))
				}
				c := agenttest.Start(b, 1, opts...)
				a := c.Agent(0)
				for i := range held {
					if _, err := agent.Door[*httpapi.Server](a).RegisterURL(benchURL("held", i), time.Hour); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					if _, err := agent.Door[*httpapi.Server](a).RegisterURL(benchURL("new", i), time.Hour); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func benchURL(kind string, i int) string {
	return fmt.Sprintf("dubbo://10.0.%d.%d:20880/org.apache.dubbo.demo.%sService%d?anyhost=true&application=demo&interface=org.apache.dubbo.demo.%sService%d&methods=sayHello&side=provider&timestamp=1735689600000",
		i/250%250, i%250, kind, i, kind, i)
}
