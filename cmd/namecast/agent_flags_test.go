package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
)

func TestZooKeeperFlags(t *testing.T) {
	cfg, _, err := parseAgentFlags(nil, io.Discard)
	if err != nil || cfg.ZooKeeperAddr != "127.0.0.1:2181" || time.Duration(cfg.ZooKeeperGrace) != 5*time.Second {
		t.Fatalf("defaults: %q %v %v", cfg.ZooKeeperAddr, time.Duration(cfg.ZooKeeperGrace), err)
	}
	cfg, _, err = parseAgentFlags([]string{"--zookeeper", "off", "--zookeeper-grace", "2s"}, io.Discard)
	if err != nil || cfg.ZooKeeperAddr != "off" || time.Duration(cfg.ZooKeeperGrace) != 2*time.Second {
		t.Fatalf("flags: %q %v %v", cfg.ZooKeeperAddr, time.Duration(cfg.ZooKeeperGrace), err)
	}
	file := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(file, []byte(`{"zookeeper": "127.0.0.1:12181", "zookeeper_grace": "3s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err = parseAgentFlags([]string{"--config", file}, io.Discard)
	if err != nil || cfg.ZooKeeperAddr != "127.0.0.1:12181" || cfg.ZooKeeperGrace != agent.Duration(3*time.Second) {
		t.Fatalf("config file: %q %v %v", cfg.ZooKeeperAddr, time.Duration(cfg.ZooKeeperGrace), err)
	}
	cfg, _, err = parseAgentFlags([]string{"--dev"}, io.Discard)
	if err != nil || cfg.ZooKeeperAddr != "127.0.0.1:2181" {
		t.Fatalf("--dev: %q %v", cfg.ZooKeeperAddr, err)
	}
}

// --nacos-grace, and nacos_grace in the config file, set the Nacos door's
// grace; its default is the ZooKeeper door's.
func TestNacosGraceFlag(t *testing.T) {
	cfg, _, err := parseAgentFlags(nil, io.Discard)
	if err != nil || time.Duration(cfg.NacosGrace) != 5*time.Second {
		t.Fatalf("default: %v %v", time.Duration(cfg.NacosGrace), err)
	}
	cfg, _, err = parseAgentFlags([]string{"--nacos-grace", "2s", "--zookeeper-grace", "7s"}, io.Discard)
	if err != nil || time.Duration(cfg.NacosGrace) != 2*time.Second || time.Duration(cfg.ZooKeeperGrace) != 7*time.Second {
		t.Fatalf("flags: nacos %v zookeeper %v %v", time.Duration(cfg.NacosGrace), time.Duration(cfg.ZooKeeperGrace), err)
	}
	file := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(file, []byte(`{"nacos_grace": "3s"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err = parseAgentFlags([]string{"--config", file}, io.Discard)
	if err != nil || cfg.NacosGrace != agent.Duration(3*time.Second) {
		t.Fatalf("config file: %v %v", time.Duration(cfg.NacosGrace), err)
	}
}

func TestMemoryLimitFlag(t *testing.T) {
	cfg, _, err := parseAgentFlags(nil, io.Discard)
	if err != nil || cfg.MemoryLimit != "" {
		t.Fatalf("default: %q %v (want empty: GOMEMLIMIT, else auto)", cfg.MemoryLimit, err)
	}
	cfg, _, err = parseAgentFlags([]string{"--memory-limit", "48MiB"}, io.Discard)
	if err != nil || cfg.MemoryLimit != "48MiB" {
		t.Fatalf("flag: %q %v", cfg.MemoryLimit, err)
	}
	file := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(file, []byte(`{"memory_limit": "off"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, _, err = parseAgentFlags([]string{"--config", file}, io.Discard); err != nil || cfg.MemoryLimit != "off" {
		t.Fatalf("config file: %q %v", cfg.MemoryLimit, err)
	}
	cfg, _, _ = parseAgentFlags([]string{"--memory-limit", "lots"}, io.Discard)
	if _, err := agent.New(cfg); err == nil || !strings.Contains(err.Error(), "--memory-limit") {
		t.Fatalf("a bad --memory-limit: %v, want an error naming the flag", err)
	}
}

func TestDiscoverInterfaceFlag(t *testing.T) {
	cfg, _, err := parseAgentFlags([]string{"--discover", "prod", "--discover-interface", "eth1"}, io.Discard)
	if err != nil || cfg.Discover != "prod" || cfg.DiscoverInterface != "eth1" {
		t.Fatalf("--discover-interface eth1: %q %v", cfg.DiscoverInterface, err)
	}
}

// A mistyped flag is two lines, as for every other command, not the
// agent's whole flag list.
func TestAgentBadFlagIsTwoLines(t *testing.T) {
	r := run(t, "", "agent", "--bogus")
	if r.code != 2 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q", r.code, r.stdout)
	}
	want := "namecast agent: flag provided but not defined: -bogus\nRun 'namecast help agent' for usage.\n"
	if r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}

// A duration flag given something else says what a duration looks like;
// flag.Duration said only "parse error". Help still shows the placeholder
// and the default.
func TestBadDurationFlagSaysWhatADurationIs(t *testing.T) {
	for _, f := range []string{"--nacos-grace", "--zookeeper-grace"} {
		_, _, err := parseAgentFlags([]string{f, "abc"}, io.Discard)
		if err == nil || strings.Contains(err.Error(), "parse error") || !strings.Contains(err.Error(), "such as 30s") {
			t.Errorf("%s abc: %v; want it to say what a duration looks like", f, err)
		}
	}
	for _, args := range [][]string{{"register", "url", "--ttl", "soon", "dubbo://h:1/x"}, {"register", "broker", "--ttl", "soon", "--file", "-"},
		{"register", "instance", "app", "h:1", "--ttl", "soon"}} {
		r := run(t, "", args...)
		if r.code != 2 || strings.Contains(r.stderr, "parse error") || !strings.Contains(r.stderr, "such as 30s") {
			t.Errorf("%v: exit %d, %q; want 2 and what a duration looks like", args, r.code, r.stderr)
		}
	}
	var help strings.Builder
	parseAgentFlags([]string{"--help"}, &help)
	if !strings.Contains(help.String(), "--nacos-grace duration\n") || !strings.Contains(help.String(), "(default 5s)") {
		t.Errorf("agent --help lost the duration placeholder or default:\n%s", help.String())
	}
	if r := run(t, "", "register", "url", "--help"); !strings.Contains(r.stdout, "--ttl duration\n") {
		t.Errorf("register url --help lost the duration placeholder:\n%s", r.stdout)
	}
}

// Every value flag of `namecast agent --help` names what its value is
// (--max-records-mib MiB, --log-level level), not Go's type ("int",
// "string").
func TestAgentHelpNamesEveryValue(t *testing.T) {
	r := run(t, "", "agent", "--help")
	if r.code != 0 {
		t.Fatalf("agent --help: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, line := range strings.Split(r.stdout+r.stderr, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && strings.HasPrefix(f[0], "--") && (f[1] == "int" || f[1] == "string" || f[1] == "value") {
			t.Errorf("%q names its value by Go's type", strings.TrimSpace(line))
		}
	}
}
