// Command screenshots regenerates the README's pictures of the web UI from
// a real cluster: four agent processes built from this checkout, a few
// brokers, services, an application and rules registered through agents 1
// and 2, agent 4 killed (a dead member), and every page photographed on
// agent 3 in headless Chromium at 1280 px (NAME.png) and 390 px
// (NAME-narrow.png).
//
//	cd test/browser && go run ./cmd/screenshots -out ../../docs/ui
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/namecast/namecast/test/browser/harness"
)

func main() {
	out := flag.String("out", filepath.Join(harness.RepoRoot(), "docs", "ui"), "directory for the PNG files")
	flag.Parse()
	if err := run(*out); err != nil {
		log.Fatal(err)
	}
}

func run(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "namecast-shots")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := harness.Build(tmp)
	if err != nil {
		return err
	}
	c, err := harness.Start(bin, 4, func(i int) []string {
		return []string{"--tag", fmt.Sprintf("zone=zone-%c", 'a'+i-1), "--tag", "role=broker-host"}
	})
	if err != nil {
		return err
	}
	defer c.Close()
	if err := register(c); err != nil {
		return err
	}
	c.Kill(4)
	ctx, cancel, err := harness.Browser(context.Background())
	if err != nil {
		return err
	}
	defer cancel()
	a3 := c.Agents[2]
	for _, s := range []struct{ path, wait, name string }{
		{"/ui/", "5 broker groups", "overview"},
		{"/ui/members", "dead ", "members"},
		{"/ui/topics", "ClickStream", "topics"},
		{"/ui/topics/Orders", "broker-b", "topic"},
		{"/ui/clusters", "AnalyticsCluster", "clusters"},
		{"/ui/services", "com.example.Billing", "services"},
		{"/ui/services/com.example.Greeter", "greeter-app", "service"},
		{"/ui/apps", "greeter-app", "apps"},
		{"/ui/apps/greeter-app", "10.0.1.40", "app"},
		{"/ui/rules", "/dubbo/mapping/", "rules"},
		{"/ui/agent", "per second, applied from gossip", "agent"},
	} {
		for _, w := range []struct {
			width  int64
			suffix string
		}{{1280, ""}, {390, "-narrow"}} {
			file := filepath.Join(out, s.name+w.suffix+".png")
			if err := shoot(ctx, a3.URL(s.path), s.wait, file, w.width); err != nil {
				return fmt.Errorf("%s at %d px: %w", s.path, w.width, err)
			}
			log.Printf("wrote %s", file)
		}
	}
	return nil
}

func register(c *harness.Cluster) error {
	a1, a2 := c.Agents[0], c.Agents[1]
	steps := []struct {
		a    *harness.Agent
		path string
		body map[string]any
	}{
		{a1, "/v1/brokers", harness.Broker("DefaultCluster", "broker-a", 0, "10.0.1.11:10911", "Orders", "Payments", "Inventory", "%RETRY%order-consumers")},
		{a1, "/v1/brokers", harness.Broker("DefaultCluster", "broker-a", 1, "10.0.1.12:10911")},
		{a2, "/v1/brokers", withTTL(harness.Broker("DefaultCluster", "broker-b", 0, "10.0.2.11:10911", "Orders", "Payments", "Shipping"), "120s")},
		{a2, "/v1/brokers", withTTL(harness.Broker("DefaultCluster", "broker-b", 1, "10.0.2.12:10911"), "120s")},
		{a2, "/v1/brokers", harness.Broker("AnalyticsCluster", "broker-c", 0, "10.0.3.11:10911", "ClickStream", "Metrics")},
		{a1, "/v1/brokers", harness.Broker("AnalyticsCluster", "broker-d", 0, "10.0.4.11:10911", "ClickStream")},
		{a2, "/v1/brokers", harness.Broker("AnalyticsCluster", "broker-e", 0, "10.0.5.11:10911", "Audit")},
		{a1, "/v1/urls", harness.URL("dubbo://10.0.1.21:20880/com.example.Greeter?application=greeter-app&version=1.2.0&group=prod&methods=hello,bye,ping&side=provider&timeout=3000")},
		{a2, "/v1/urls", harness.URL("dubbo://10.0.2.21:20880/com.example.Greeter?application=greeter-app&version=1.2.0&group=prod&methods=hello,bye,ping&side=provider&weight=50")},
		{a2, "/v1/urls", harness.URL("consumer://10.0.2.31/com.example.Greeter?category=consumers&application=shop-web&version=1.2.0&side=consumer")},
		{a1, "/v1/urls", harness.URL("override://0.0.0.0/com.example.Greeter?category=configurators&dynamic=false&weight=50&application=greeter-app")},
		{a2, "/v1/urls", harness.URL("condition://0.0.0.0/com.example.Greeter?category=routers&dynamic=false&rule=host%3D10.0.2.31%3D%3Ehost%3D10.0.2.21&priority=1")},
		{a1, "/v1/urls", harness.URL("dubbo://10.0.1.22:20881/com.example.Billing?application=billing&version=2.0.0&methods=charge,refund")},
		{a1, "/v1/apps/greeter-app/instances", map[string]any{"address": "10.0.1.40", "port": 20880,
			"interfaces": []string{"com.example.Greeter"}, "metadata": map[string]string{"region": "eu-west"}}},
	}
	for _, s := range steps {
		if err := s.a.Put(s.path, s.body); err != nil {
			return err
		}
	}
	return nil
}

func shoot(browser context.Context, url, wait, file string, width int64) error {
	tab, err := harness.NewTab(browser, width, 900)
	if err != nil {
		return err
	}
	defer tab.Close()
	if err := tab.Open(url); err != nil {
		return err
	}
	// Wait for the data.
	if err := tab.WaitFor(fmt.Sprintf(`document.getElementById('view').innerText.includes(%q)`, wait), 30*time.Second); err != nil {
		return err
	}
	png, err := tab.FullScreenshot()
	if err != nil {
		return err
	}
	if p := tab.Problems(); len(p) > 0 {
		return fmt.Errorf("page problems: %v", p)
	}
	return os.WriteFile(file, png, 0o644)
}

// withTTL gives a registration a TTL, so the Clusters page shows an expiry
// (120 s: a RocketMQ broker's default timeout).
func withTTL(reg map[string]any, ttl string) map[string]any {
	reg["ttl"] = ttl
	return reg
}
