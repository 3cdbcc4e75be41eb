package client

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultAddress is where an agent serves its HTTP API unless told otherwise.
const DefaultAddress = "127.0.0.1:7947"

// The environment variables NewClient reads for what its Config leaves empty.
const (
	EnvHTTPAddr  = "NAMECAST_HTTP_ADDR"
	EnvHTTPToken = "NAMECAST_HTTP_TOKEN"
)

// IndexHeader carries the agent's index on every answer.
const IndexHeader = "X-Namecast-Index"

// Config says which agent a Client talks to and how.
type Config struct {
	// Address of the agent's HTTP API: "host:port" or a URL such as
	// "http://host:port" or "https://host:port". Empty means
	// $NAMECAST_HTTP_ADDR, else DefaultAddress. A missing port means 7947;
	// a port alone ("7948") means that port on 127.0.0.1, where an agent
	// beside the caller listens.
	Address string

	// Token is sent as "Authorization: Bearer <token>" with every request;
	// an agent started with --http-token requires it for writes. Empty
	// means $NAMECAST_HTTP_TOKEN.
	Token string

	// HTTPClient sends the requests. Nil means a client without a timeout:
	// blocking queries legitimately last minutes, so bound each call with
	// its context instead.
	HTTPClient *http.Client
}

// Client calls one agent's HTTP API. It is safe for concurrent use.
type Client struct {
	base  string // scheme://host[:port][/prefix], no trailing slash
	host  string
	token string
	hc    *http.Client

	// Watch loop tuning; fields rather than constants so tests can shrink
	// them without touching shared state.
	watchWait  time.Duration
	backoffMin time.Duration
	backoffMax time.Duration
}

// NewClient returns a client for the agent cfg names. It does not contact
// the agent: an unreachable agent shows up as an error on the first call.
func NewClient(cfg Config) (*Client, error) {
	addr := cfg.Address
	if addr == "" {
		addr = os.Getenv(EnvHTTPAddr)
	}
	if addr == "" {
		addr = DefaultAddress
	}
	base, err := parseAddress(addr)
	if err != nil {
		return nil, err
	}
	token := cfg.Token
	if token == "" {
		token = os.Getenv(EnvHTTPToken)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{
		base:       strings.TrimSuffix(base.String(), "/"),
		host:       base.Host,
		token:      token,
		hc:         hc,
		watchWait:  5 * time.Minute,
		backoffMin: 250 * time.Millisecond,
		backoffMax: 10 * time.Second,
	}, nil
}

// Address is the host:port the client sends requests to, for messages.
func (c *Client) Address() string { return c.host }

func parseAddress(addr string) (*url.URL, error) {
	raw := addr
	if isPort(raw) {
		raw = "127.0.0.1:" + raw
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("namecast: bad agent address %q: %v", addr, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("namecast: bad agent address %q: scheme must be http or https", addr)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("namecast: bad agent address %q: want host:port or http://host:port", addr)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), "7947")
	}
	return u, nil
}

// isPort says whether s is a port number alone, such as "7948".
func isPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n > 0 && n < 65536 && strconv.Itoa(n) == s
}
