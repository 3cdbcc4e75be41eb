package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent"
)

// soloConfig is one agent on loopback with every port chosen by the
// kernel, keeping its state in dir.
func soloConfig(name, dir string) agent.Config {
	cfg := agent.DefaultConfig()
	cfg.NodeName, cfg.Profile = name, "local"
	cfg.BindAddr, cfg.HTTPAddr, cfg.RocketMQAddr, cfg.ZooKeeperAddr, cfg.NacosAddr = "127.0.0.1:0", "127.0.0.1:0", "off", "off", "off"
	cfg.ConsulAddr = "off"
	cfg.DNSAddr = "off"
	cfg.DataDir = dir
	return cfg
}

// A damaged keyring.json is refused: the agent does not start, the error
// names the file and the way out, and the file stays where it is. Before,
// the agent set the file aside with a WARN and ran with gossip
// unencrypted, so a keyless agent could join it and register routes its
// clients were served.
func TestDamagedKeyringRefusesToStart(t *testing.T) {
	for name, content := range map[string]string{
		"garbage":   "\x00\x01not json",
		"empty":     "",
		"no keys":   "[]",
		"bad key":   `["!!notbase64"]`,
		"short key": `["c2hvcnQ="]`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "keyring.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			a, err := agent.New(soloConfig("victim", dir))
			if err != nil {
				t.Fatal(err)
			}
			err = a.Start(context.Background())
			if err == nil {
				a.Shutdown()
				t.Fatal("an agent with a damaged keyring.json started (gossip unencrypted)")
			}
			for _, want := range []string{path, "--encrypt"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if b, rerr := os.ReadFile(path); rerr != nil || string(b) != content {
				t.Errorf("the damaged keyring was moved or changed: %v", rerr)
			}
		})
	}
}

// A data dir is one agent's: a second agent started on it while the first
// runs refuses, naming the holder (its pid and node name), and the first
// keeps running. Before, both started and overwrote each other's leases,
// incarnation, keyring and rules. Once the first stops, the dir is free.
func TestSecondAgentOnOneDataDirRefuses(t *testing.T) {
	dir := t.TempDir()
	first, err := agent.New(soloConfig("first", dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer first.Shutdown()
	second, err := agent.New(soloConfig("second", dir))
	if err != nil {
		t.Fatal(err)
	}
	err = second.Start(context.Background())
	if err == nil {
		second.Shutdown()
		t.Fatal("a second agent started on a data dir in use")
	}
	for _, want := range []string{dir, "first", "pid " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if first.HTTPAddr() == "" {
		t.Fatal("the first agent stopped")
	}
	first.Shutdown()
	third, err := agent.New(soloConfig("third", dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := third.Start(context.Background()); err != nil {
		t.Fatalf("after the holder stopped: %v", err)
	}
	third.Shutdown()
}
