package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// docs/trust.md has a section for the gossip port, every door the agent
// opens (the flags that take a door's address) and the metrics listener,
// and its table names each.
func TestTrustDocCoversEveryDoor(t *testing.T) {
	b, err := os.ReadFile("../../docs/trust.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	headings := strings.Join(regexp.MustCompile(`(?m)^## .*$`).FindAllString(doc, -1), "\n")
	for flag, name := range map[string]string{"bind": "Gossip", "http": "HTTP API", "rocketmq": "RocketMQ",
		"zookeeper": "ZooKeeper", "nacos": "Nacos", "metrics": "Metrics"} {
		if !strings.Contains(headings, "## "+name) {
			t.Errorf("docs/trust.md has no section on --%s (## %s ...)", flag, name)
		}
		if !regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(strings.ToLower(strings.Fields(name)[0]))).MatchString(strings.ToLower(doc)) {
			t.Errorf("docs/trust.md's table has no row for --%s (%s)", flag, name)
		}
	}
}
