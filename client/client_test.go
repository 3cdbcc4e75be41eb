package client

import (
	"context"
	"net/http"
	"testing"
)

func TestNewClientAddress(t *testing.T) {
	tests := []struct {
		env, addr, want string
	}{
		{"", "", "http://127.0.0.1:7947"},
		{"10.0.0.1:8000", "", "http://10.0.0.1:8000"},
		{"10.0.0.1:8000", "10.0.0.2:9000", "http://10.0.0.2:9000"},
		{"", "http://h:1", "http://h:1"},
		{"", "https://h:1/", "https://h:1"},
		{"", "http://h:1/prefix/", "http://h:1/prefix"},
		{"", "h", "http://h:7947"},
		{"", "[::1]", "http://[::1]:7947"},
		{"", "[::1]:80", "http://[::1]:80"},
		{"", "7948", "http://127.0.0.1:7948"},
		{"7948", "", "http://127.0.0.1:7948"},
	}
	for _, tt := range tests {
		t.Setenv(EnvHTTPAddr, tt.env)
		c, err := NewClient(Config{Address: tt.addr})
		if err != nil {
			t.Errorf("env %q address %q: %v", tt.env, tt.addr, err)
			continue
		}
		if c.base != tt.want {
			t.Errorf("env %q address %q: base %q, want %q", tt.env, tt.addr, c.base, tt.want)
		}
	}
}

func TestNewClientRejectsBadAddress(t *testing.T) {
	for _, addr := range []string{"ftp://h:1", "http://", "http://h:1?x=1", "http://u:p@h:1", "h:%zz"} {
		if _, err := NewClient(Config{Address: addr}); err == nil {
			t.Errorf("address %q: no error", addr)
		}
	}
}

func TestEnvAddressReachesAgent(t *testing.T) {
	f := newFakeAgent(t)
	f.set("/v1/health", `{"node":"n1","status":"ok","members":3}`)
	t.Setenv(EnvHTTPAddr, f.srv.Listener.Addr().String())
	c, err := NewClient(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(http.DefaultTransport.(*http.Transport).CloseIdleConnections)
	if c.Address() != f.srv.Listener.Addr().String() {
		t.Errorf("Address() = %q, want %q", c.Address(), f.srv.Listener.Addr())
	}
	h, _, err := c.Health(context.Background(), nil)
	if err != nil || h.Node != "n1" {
		t.Fatalf("Health = %+v, %v", h, err)
	}
}

func TestTokenIsSent(t *testing.T) {
	f := newFakeAgent(t)
	f.set("/v1/topics", `{"topics":[]}`)
	for _, tt := range []struct{ cfg, env, want string }{
		{"", "", ""},
		{"", "from-env", "Bearer from-env"},
		{"from-config", "from-env", "Bearer from-config"},
	} {
		t.Setenv(EnvHTTPToken, tt.env)
		c, err := NewClient(Config{Address: f.srv.URL, Token: tt.cfg})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Topics(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if got := f.next(t).Header.Get("Authorization"); got != tt.want {
			t.Errorf("config %q env %q: sent token %q, want %q", tt.cfg, tt.env, got, tt.want)
		}
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

type countingTransport struct{ n int }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return http.DefaultTransport.RoundTrip(r)
}

func TestConfigHTTPClientIsUsed(t *testing.T) {
	f := newFakeAgent(t)
	f.set("/v1/services", `{"services":[]}`)
	tr := &countingTransport{}
	c, err := NewClient(Config{Address: f.srv.URL, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Services(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if tr.n != 1 {
		t.Errorf("custom transport saw %d requests, want 1", tr.n)
	}
}
