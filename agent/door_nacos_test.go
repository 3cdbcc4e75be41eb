package agent_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/internal/testutil"
)

// The agent serves the Nacos door: a Dubbo provider registered through
// Nacos' 1.x HTTP API on one agent is listed by Nacos there and is the
// same Dubbo URL record the HTTP door shows on another agent; GET
// /v1/agent says where the door listens.
func TestNacosDoorServesTheRegistry(t *testing.T) {
	c := agenttest.Start(t, 2) // agenttest puts Nacos on 127.0.0.1:0
	a := c.Agent(0)
	if a.Addr("nacos") == "" || a.Addr("nacos-grpc") == "" || a.Addr("nacos") == a.Addr("nacos-grpc") {
		t.Fatalf("Nacos door on %q, gRPC on %q", a.Addr("nacos"), a.Addr("nacos-grpc"))
	}
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	nacosURL := "http://" + a.Addr("nacos") + "/nacos/v1/ns/instance"
	const service = "providers:com.example.NacosGreeter:1.0.0:"
	inst := url.Values{"serviceName": {service}, "ip": {"10.0.0.7"}, "port": {"20880"},
		"metadata": {`{"interface":"com.example.NacosGreeter","version":"1.0.0","side":"provider"}`}}
	req, _ := http.NewRequest("POST", nacosURL+"?"+inst.Encode(), nil)
	if status, body := do(t, client, req); status != http.StatusOK || string(body) != "ok" {
		t.Fatalf("Nacos register: %d %s", status, body)
	}
	req, _ = http.NewRequest("GET", nacosURL+"/list?"+url.Values{"serviceName": {service}}.Encode(), nil)
	if status, body := do(t, client, req); status != http.StatusOK || !strings.Contains(string(body), `"ip":"10.0.0.7"`) {
		t.Fatalf("Nacos list: %d %s", status, body)
	}
	const want = "dubbo://10.0.0.7:20880/com.example.NacosGreeter?"
	for i := range 2 {
		testutil.Eventually(t, 10*time.Second, func() error {
			req, _ := http.NewRequest("GET", "http://"+c.Agent(i).HTTPAddr()+"/v1/services/com.example.NacosGreeter", nil)
			if status, body := do(t, client, req); status != http.StatusOK || !strings.Contains(string(body), want) {
				return fmt.Errorf("agent %d's /v1/services: %d %s, want %s...", i, status, body, want)
			}
			return nil
		})
	}

	req, _ = http.NewRequest("GET", "http://"+a.HTTPAddr()+"/v1/agent", nil)
	status, body := do(t, client, req)
	var info struct {
		NacosAddr     string `json:"nacosAddr"`
		NacosGRPCAddr string `json:"nacosGrpcAddr"`
		Config        struct {
			Nacos string `json:"nacos"`
		} `json:"config"`
	}
	if err := json.Unmarshal(body, &info); err != nil || status != http.StatusOK {
		t.Fatalf("/v1/agent: %d %s %v", status, body, err)
	}
	if info.NacosAddr != a.Addr("nacos") || info.NacosGRPCAddr != a.Addr("nacos-grpc") || info.Config.Nacos != "127.0.0.1:0" {
		t.Fatalf("/v1/agent says Nacos on %q, gRPC %q, config %q; the door is on %q, %q", info.NacosAddr, info.NacosGRPCAddr,
			info.Config.Nacos, a.Addr("nacos"), a.Addr("nacos-grpc"))
	}
}

// A taken Nacos port, HTTP or gRPC (the HTTP port + 1000), stops the agent
// with a message naming the port and the ways out; "off" starts no
// listener.
func TestNacosPortTaken(t *testing.T) {
	start := func(addr string) error {
		cfg := agent.DefaultConfig()
		cfg.NodeName = "nacos-port"
		cfg.BindAddr, cfg.HTTPAddr, cfg.RocketMQAddr, cfg.ZooKeeperAddr, cfg.NacosAddr = "127.0.0.1:0", "127.0.0.1:0", "off", "off", addr
		cfg.ConsulAddr = "off"
		cfg.DNSAddr = "off"
		a, err := agent.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = a.Start(t.Context())
		if err == nil {
			a.Shutdown()
			t.Fatalf("agent started with Nacos on %s, a taken port", addr)
		}
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = start(ln.Addr().String())
	for _, want := range []string{ln.Addr().String(), "--nacos off", "--nacos HOST:PORT"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("HTTP port taken: error %q does not say %q", err, want)
		}
	}

	// The gRPC port taken, the HTTP port (1000 below it) free.
	port := ln.Addr().(*net.TCPAddr).Port
	if port < 1000 {
		t.Skipf("port %d has no port 1000 below it", port)
	}
	httpAddr := "127.0.0.1:" + strconv.Itoa(port-1000)
	if l, err := net.Listen("tcp", httpAddr); err != nil {
		t.Skipf("%s, 1000 below the taken port, is not free either", httpAddr)
	} else {
		l.Close()
	}
	err = start(httpAddr)
	for _, want := range []string{"gRPC", ln.Addr().String(), "--nacos off", "--nacos HOST:PORT"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("gRPC port taken: error %q does not say %q", err, want)
		}
	}

	off := agenttest.Start(t, 1, func(cfg *agent.Config) { cfg.NacosAddr = "off" })
	if got := off.Agent(0).Addr("nacos"); got != "" {
		t.Fatalf(`NacosAddr with "off" = %q`, got)
	}
}
