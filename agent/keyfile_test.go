package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
)

// writeKeyFile writes k to a new file of mode perm.
func writeKeyFile(t *testing.T, k string, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gossip.key")
	if err := os.WriteFile(path, []byte(k+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

// --encrypt-file keeps the gossip key off the command line: the agents
// that read it gossip under that key.
func TestEncryptFileIsTheGossipKey(t *testing.T) {
	path := writeKeyFile(t, key(7), 0o600)
	c := agenttest.Start(t, 2, func(cfg *agent.Config) { cfg.EncryptKeyFile = path })
	c.WaitMembers(2)
	res := keyOp(t, c.Agent(1).HTTPAddr(), "list", "")
	if res.Keys[fp(key(7))] != 2 || len(res.Keys) != 1 {
		t.Fatalf("keys list: %+v; want only %s, on both members", res, fp(key(7)))
	}
}

// A key file others could read or change is refused at New, saying which
// and how to fix it; so are a bad key and both --encrypt and
// --encrypt-file at once.
func TestEncryptFileRefused(t *testing.T) {
	otherGroup := writeKeyFile(t, key(7), 0o640)
	if err := os.Chown(otherGroup, -1, os.Getegid()+4242); err != nil {
		t.Logf("cannot chgrp (%v): the foreign-group case is not checked", err)
		otherGroup = ""
	}
	for _, tt := range []struct {
		name, path, key, want string
	}{
		{"world readable", writeKeyFile(t, key(7), 0o644), "", "mode 0644 lets every user of the host read or change it; chmod 600"},
		{"world writable", writeKeyFile(t, key(7), 0o602), "", "mode 0602 lets every user"},
		{"group writable", writeKeyFile(t, key(7), 0o620), "", "mode 0620 lets its group change it"},
		{"another group readable", otherGroup, "", "mode 0640 lets its group, not this agent's own, read it"},
		{"not a key", writeKeyFile(t, "hello", 0o600), "", "the key is not valid base64"},
		{"missing", filepath.Join(t.TempDir(), "none"), "", "no such file"},
		{"both flags", writeKeyFile(t, key(7), 0o600), key(7), "--encrypt and --encrypt-file both give the gossip key"},
	} {
		if tt.path == "" {
			continue
		}
		cfg := agent.DevConfig()
		cfg.EncryptKeyFile, cfg.EncryptKey = tt.path, tt.key
		_, err := agent.New(cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--encrypt") {
			t.Errorf("%s: New: %v; want an error with %q", tt.name, err, tt.want)
		}
	}
	// Read by the agent's own group only (a Secret volume with fsGroup): taken.
	cfg := agent.DevConfig()
	cfg.EncryptKeyFile = writeKeyFile(t, key(7), 0o440)
	if _, err := agent.New(cfg); err != nil {
		t.Errorf("mode 0440 of the agent's own group: %v", err)
	}
}
