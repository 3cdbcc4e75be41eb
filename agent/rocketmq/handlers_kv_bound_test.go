package rocketmq

import (
	"errors"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

// PUT_KV_CONFIG bounds its key and value as the HTTP API bounds a body:
// over the bound it answers SYSTEM_ERROR saying so, and stores nothing.
// Before, a 5 MiB value was stored and held by every agent.
func TestKVConfigIsBounded(t *testing.T) {
	reg := newFake()
	c := dial(t, startServer(t, reg))
	for name, ext := range map[string]map[string]string{
		"value": {"namespace": "ns", "key": "k", "value": strings.Repeat("v", maxKVValue+1)},
		"key":   {"namespace": "ns", "key": strings.Repeat("k", maxKVKey+1), "value": "v"},
	} {
		resp := do(t, c, remoting.PutKVConfig, ext, nil)
		if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "too large") {
			t.Fatalf("%s over the bound: code %d remark %q", name, resp.Code, resp.Remark)
		}
	}
	if kv := reg.Routes.KVs("ns"); len(kv) != 0 {
		t.Fatalf("stored %d entries over the bound", len(kv))
	}
	wantCode(t, do(t, c, remoting.PutKVConfig, map[string]string{"namespace": "ns", "key": "k", "value": strings.Repeat("v", maxKVValue)}, nil), remoting.Success, "")
}

// A KV write or delete the agent refuses (rules full, data dir unable to
// save it) answers SYSTEM_ERROR with the agent's reason; before, the
// handler ignored the outcome and answered SUCCESS.
func TestKVConfigRefusedByTheAgent(t *testing.T) {
	reg := newFake()
	c := dial(t, startServer(t, reg))
	wantCode(t, do(t, c, remoting.PutKVConfig, map[string]string{"namespace": "ns", "key": "k", "value": "v"}, nil), remoting.Success, "")
	hosttest.SetErr(&reg.RulesErr, errors.New("saving the rule to the data dir failed: no space left on device"))
	wantCode(t, do(t, c, remoting.PutKVConfig, map[string]string{"namespace": "ns", "key": "k2", "value": "v"}, nil),
		remoting.SystemError, "saving the rule to the data dir failed: no space left on device")
	wantCode(t, do(t, c, remoting.DeleteKVConfig, map[string]string{"namespace": "ns", "key": "k"}, nil),
		remoting.SystemError, "saving the rule to the data dir failed: no space left on device")
	if kv := reg.Routes.KVs("ns"); len(kv) != 1 || kv["k"] != "v" {
		t.Fatalf("after refused writes: %v", kv)
	}
}
