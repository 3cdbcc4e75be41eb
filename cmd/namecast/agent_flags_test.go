package main

import (
	"io"
	"os"
	"path/filepath"
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
