package agent_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/client"
)

// guardCase is one request as a browser (or a tool) would send it.
type guardCase struct {
	name, method, path, host, ctype, body string
	headers                               map[string]string
	status                                int
}

func runGuardCases(t *testing.T, addr string, cases []guardCase) {
	t.Helper()
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, "http://"+addr+tc.path, strings.NewReader(tc.body))
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		for k, v := range tc.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %s %s (Host %q): %d %s, want %d", tc.name, tc.method, tc.path, req.Host, resp.StatusCode, raw, tc.status)
		}
	}
}

// A web page in a browser on the agent's host could POST text/plain to
// the loopback API (reading the gossip key, stopping the agent), and with
// DNS rebinding read any answer. Every such request is now refused, while
// tools and the agent's own pages pass.
func TestHTTPRefusesCrossSiteAndRebinding(t *testing.T) {
	c := agenttest.Start(t, 1, func(cfg *agent.Config) {
		cfg.EncryptKey = key(5)
		cfg.HTTPAllowHosts = []string{"namecast.internal"}
	})
	addr := c.Agent(0).HTTPAddr()
	_, port, _ := strings.Cut(addr, ":")
	list := `{"op":"list"}`
	evil := map[string]string{"Origin": "http://evil.example"}
	runGuardCases(t, addr, []guardCase{
		{name: "simple POST from a page", method: "POST", path: "/v1/keys", ctype: "text/plain", body: list, headers: evil, status: 403},
		{name: "text/plain POST", method: "POST", path: "/v1/keys", ctype: "text/plain", body: list, status: 415},
		{name: "form POST", method: "POST", path: "/v1/leave", ctype: "application/x-www-form-urlencoded", status: 415},
		{name: "POST without type", method: "POST", path: "/v1/leave", status: 415},
		{name: "PUT without type", method: "PUT", path: "/v1/urls", body: `{"url":"dubbo://1.2.3.4:5/S"}`, status: 415},
		{name: "JSON POST from another origin", method: "POST", path: "/v1/keys", ctype: "application/json", body: list, headers: evil, status: 403},
		{name: "opaque origin", method: "POST", path: "/v1/keys", ctype: "application/json", body: list, headers: map[string]string{"Origin": "null"}, status: 403},
		{name: "cross-site GET", method: "GET", path: "/v1/topics", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, status: 403},
		{name: "same-site GET (another port)", method: "GET", path: "/v1/topics", headers: map[string]string{"Sec-Fetch-Site": "same-site"}, status: 403},
		{name: "rebound name", method: "GET", path: "/v1/topics", host: "attacker.example:" + port, status: 403},
		{name: "rebound name on metrics", method: "GET", path: "/metrics", host: "attacker.example:" + port, status: 403},
		{name: "rebound name, same-origin", method: "GET", path: "/v1/health", host: "attacker.example:" + port,
			headers: map[string]string{"Sec-Fetch-Site": "same-origin"}, status: 403},

		{name: "curl", method: "GET", path: "/v1/topics", status: 200},
		{name: "localhost", method: "GET", path: "/v1/topics", host: "localhost:" + port, status: 200},
		{name: "IPv6 loopback", method: "GET", path: "/v1/topics", host: "[::1]:" + port, status: 200},
		{name: "allowed name", method: "GET", path: "/v1/topics", host: "namecast.internal:" + port, status: 200},
		{name: "typed in the address bar", method: "GET", path: "/v1/health", headers: map[string]string{"Sec-Fetch-Site": "none"}, status: 200},
		{name: "the agent's own page reads", method: "GET", path: "/v1/topics",
			headers: map[string]string{"Sec-Fetch-Site": "same-origin"}, status: 200},
		{name: "the agent's own page writes", method: "PUT", path: "/v1/urls", ctype: "application/json; charset=utf-8",
			body:    `{"url":"dubbo://10.9.0.1:20880/com.example.Guarded"}`,
			headers: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://" + addr}, status: 200},
		{name: "DELETE without a body", method: "DELETE", path: "/v1/brokers/c/nobody/0", status: 404},
	})
	// Nothing above stopped the agent.
	var h map[string]any
	if status, _ := call(t, "GET", addr, "/v1/health", nil, &h); status != 200 || h["status"] != "ok" {
		t.Fatalf("health after the refused requests: %d %v", status, h)
	}
}

// The keyring list named keys by their material, so whoever could read an
// answer held the cluster's gossip key. It names them by fingerprint.
func TestKeyringAnswersCarryFingerprintsOnly(t *testing.T) {
	c := agenttest.Start(t, 2, func(cfg *agent.Config) { cfg.EncryptKey = key(6) })
	cl, err := client.NewClient(client.Config{Address: c.Agent(0).HTTPAddr()})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"list", "install"} {
		req, _ := http.NewRequest("POST", "http://"+c.Agent(0).HTTPAddr()+"/v1/keys",
			strings.NewReader(`{"op":"`+op+`","key":"`+key(9)+`"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, k := range []string{key(6), key(9), key(6)[:16], key(9)[:16]} {
			if strings.Contains(string(raw), k) {
				t.Fatalf("%s answer %s carries key material %q", op, raw, k)
			}
		}
	}
	res, err := cl.KeyringList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := client.KeyFingerprint(key(6))
	if want != fp(key(6)) || res.Primary[want] != 2 || res.Keys[fp(key(9))] != 2 {
		t.Fatalf("keyring list %+v, want %s primary on both members and %s installed", res, want, fp(key(9)))
	}
}
