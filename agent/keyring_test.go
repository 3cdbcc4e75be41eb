package agent_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
)

func key(b byte) string {
	k := make([]byte, 32)
	for i := range k {
		k[i] = b
	}
	return base64.StdEncoding.EncodeToString(k)
}

// fp is the fingerprint keyring answers name base64 key k by.
func fp(k string) string {
	raw, _ := base64.StdEncoding.DecodeString(k)
	return agent.KeyFingerprint(raw)
}

type keyResult struct {
	Members int               `json:"members"`
	Failed  map[string]string `json:"failed"`
	Keys    map[string]int    `json:"keys"`
	Primary map[string]int    `json:"primary"`
}

func keyOp(t *testing.T, addr, op, k string) keyResult {
	t.Helper()
	var res keyResult
	if status, _ := call(t, "POST", addr, "/v1/keys", map[string]string{"op": op, "key": k}, &res); status != 200 {
		t.Fatalf("%s: status %d", op, status)
	}
	if len(res.Failed) > 0 {
		t.Fatalf("%s failed on %v", op, res.Failed)
	}
	return res
}

func TestKeyRotationAcrossCluster(t *testing.T) {
	old, next := key(1), key(2)
	c := agenttest.Start(t, 3, func(cfg *agent.Config) { cfg.EncryptKey = old })
	addr := c.Agent(0).HTTPAddr()

	keyOp(t, addr, "install", next)
	if res := keyOp(t, addr, "list", ""); res.Keys[fp(next)] != 3 || res.Primary[fp(old)] != 3 {
		t.Fatalf("after install: %+v", res)
	}
	keyOp(t, addr, "use", next)
	keyOp(t, addr, "remove", old)
	res := keyOp(t, addr, "list", "")
	if res.Members != 3 || res.Primary[fp(next)] != 3 || res.Keys[fp(old)] != 0 {
		t.Fatalf("after rotation: %+v", res)
	}
	// Gossip still flows on the new key alone.
	call(t, "PUT", c.Agent(2).HTTPAddr(), "/v1/brokers", brokerReg("rot", "10.5.0.1:10911", "AfterRotation"), nil)
	everywhere(t, c, 10*time.Second, wantRoute(t, "AfterRotation", "10.5.0.1:10911"))
	c.WaitMembers(3)
}

func TestAgentWithoutKeyCannotJoin(t *testing.T) {
	c := agenttest.Start(t, 2, func(cfg *agent.Config) { cfg.EncryptKey = key(7) })
	call(t, "PUT", c.Agent(0).HTTPAddr(), "/v1/brokers", brokerReg("secret", "10.6.0.1:10911", "Secret"), nil)
	for _, k := range []string{"", key(8)} {
		cfg := agent.DefaultConfig()
		cfg.NodeName, cfg.BindAddr, cfg.HTTPAddr, cfg.RocketMQAddr, cfg.ZooKeeperAddr, cfg.NacosAddr = "intruder", "127.0.0.1:0", "127.0.0.1:0", "off", "off", "off"
		cfg.ConsulAddr = "off"
		cfg.DNSAddr = "off"
		cfg.EncryptKey = k
		cfg.Join = []string{c.Agent(0).GossipAddr()}
		cfg.TuneMemberlist = agenttest.FastFailure
		a, err := agent.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = a.Start(context.Background())
		if err == nil {
			a.Shutdown()
			t.Fatalf("an agent with key %q joined an encrypted cluster", k)
		}
		if !strings.Contains(err.Error(), "could not join") {
			t.Fatalf("unexpected error: %v", err)
		}
	}
}

func TestBadEncryptKeyFailsAtStart(t *testing.T) {
	for k, want := range map[string]string{"!!notbase64": "not valid base64", base64.StdEncoding.EncodeToString([]byte("short")): "must be 16, 24 or 32 bytes"} {
		cfg := agent.DevConfig()
		cfg.EncryptKey = k
		if _, err := agent.New(cfg); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("key %q: error %v, want %q", k, err, want)
		}
	}
}

// A bad key given to POST /v1/keys (namecast keys install) is refused
// naming the request's key: it said "--encrypt: not valid base64", a flag
// the user never gave. --encrypt's own errors keep naming --encrypt.
func TestBadKeyOpNamesTheKeyNotTheFlag(t *testing.T) {
	c := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.EncryptKey = key(1) })
	for k, want := range map[string]string{"notbase64": "not valid base64", base64.StdEncoding.EncodeToString([]byte("short")): "must be 16, 24 or 32 bytes"} {
		var res struct{ Error string }
		status, _ := call(t, "POST", c.Agent(0).HTTPAddr(), "/v1/keys", map[string]string{"op": "install", "key": k}, &res)
		if status != 400 || strings.Contains(res.Error, "--encrypt") || !strings.HasPrefix(res.Error, "key: ") || !strings.Contains(res.Error, want) {
			t.Errorf("install %q: %d %q; want 400 naming the key, %q, and not --encrypt", k, status, res.Error, want)
		}
	}
	cfg := agent.DevConfig()
	cfg.EncryptKey = "notbase64"
	if _, err := agent.New(cfg); err == nil || !strings.HasPrefix(err.Error(), "--encrypt: ") {
		t.Errorf("--encrypt notbase64: %v; want it to name --encrypt", err)
	}
}
