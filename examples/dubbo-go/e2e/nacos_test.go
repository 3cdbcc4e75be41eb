package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

func needNacos(t *testing.T, reg registries) {
	t.Helper()
	if reg.nacos == nil {
		t.Skip("the Nacos door: run against agents, not -registries")
	}
}

// The example on nacos://: the provider registers through agent A's Nacos
// door (dubbo-go's default, application-level discovery: the application
// as a Nacos service, the interface → application mapping as a config),
// the consumer on agent B's Nacos door calls it; stopped (SIGTERM: dubbo-go
// deregisters), the consumer's calls fail with no provider.
func TestGreeterOverNacos(t *testing.T) {
	reg := startRegistries(t)
	needNacos(t, reg)
	bin := buildExample(t)
	p := startProcess(t, bin, "provider", reg.nacos[0], "-role", "provider", "-port", fmt.Sprint(freePort(t)))
	c := startProcess(t, bin, "consumer", reg.nacos[1], "-role", "consumer", "-name", "nacos", "-every", "100ms")
	c.waitLine(t, 60*time.Second, "CALL ok hello nacos, from 127.0.0.1:")
	t.Logf("consumer via %s called the provider registered via %s", reg.nacos[1], reg.nacos[0])
	p.signal(t, syscall.SIGTERM)
	c.waitLine(t, 30*time.Second, "CALL error")
}

// One registry behind two doors: a provider registered through one
// agent's Nacos door is called by a consumer on another agent's ZooKeeper
// door, and the other way round, registering Dubbo 2 style URLs
// (-register-mode interface): every agent lists the provider's URL
// however it came.
func TestGreeterAcrossDoors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode string
		door func(reg registries) (provider, consumer string)
	}{
		{"interface/nacos-to-zookeeper", "interface", func(r registries) (string, string) { return r.nacos[0], r.b }},
		{"interface/zookeeper-to-nacos", "interface", func(r registries) (string, string) { return r.a, r.nacos[1] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := startRegistries(t)
			needNacos(t, reg)
			bin := buildExample(t)
			pr, cr := tc.door(reg)
			startProcess(t, bin, "provider", pr, "-role", "provider", "-register-mode", tc.mode, "-port", fmt.Sprint(freePort(t)))
			if tc.mode == "interface" {
				testutil.Eventually(t, 60*time.Second, providerURLs(t, reg, 1))
			}
			c := startProcess(t, bin, "consumer", cr, "-role", "consumer", "-register-mode", tc.mode, "-name", "doors", "-every", "100ms")
			c.waitLine(t, 60*time.Second, "CALL ok hello doors, from 127.0.0.1:")
			t.Logf("consumer via %s called the provider registered via %s", cr, pr)
		})
	}
}
