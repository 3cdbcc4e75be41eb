package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// Health reports the agent's name, whether it is leaving, and how many
// members it sees.
func (c *Client) Health(ctx context.Context, q *QueryOptions) (Health, *QueryMeta, error) {
	var h Health
	meta, err := c.query(ctx, "/v1/health", nil, q, &h)
	return h, meta, err
}

// Members lists the cluster's members as the agent sees them, the dead and
// departed it still remembers included.
func (c *Client) Members(ctx context.Context, q *QueryOptions) ([]Member, *QueryMeta, error) {
	var ms []Member
	meta, err := c.query(ctx, "/v1/members", nil, q, &ms)
	return ms, meta, err
}

// Join asks the agent to join the cluster through the members at addrs
// (host:port) and returns how many it reached.
func (c *Client) Join(ctx context.Context, addrs ...string) (int, error) {
	in := struct {
		Addrs []string `json:"addrs"`
	}{addrs}
	var out struct {
		Joined int `json:"joined"`
	}
	err := c.write(ctx, http.MethodPost, "/v1/join", nil, in, &out)
	return out.Joined, err
}

// Leave asks the agent to leave the cluster gracefully: it withdraws its
// registrations everywhere, then exits.
func (c *Client) Leave(ctx context.Context) error {
	return c.write(ctx, http.MethodPost, "/v1/leave", nil, nil, nil)
}

// Metrics returns the agent's metrics in the Prometheus text format.
func (c *Client) Metrics(ctx context.Context) (string, error) {
	resp, err := c.send(ctx, http.MethodGet, "/metrics", nil, nil)
	if err != nil {
		return "", err
	}
	defer closeBody(resp)
	if err := decode(resp, "/metrics", nil); err != nil {
		return "", err
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("namecast: GET /metrics: %w", err)
	}
	return string(b), nil
}
