package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/chaos"
)

// ChaosSystem lets chaos.Run drive a cluster started WithNetwork(n). URLs
// are registered over the HTTP API, brokers through the Go API, so both
// front doors take part.
type ChaosSystem struct {
	c      *Cluster
	net    *gossiptest.Network
	client *http.Client
	url    func(a *agent.Agent, path string) string
	addrs  []string // gossip address of each slot, kept across restarts
}

var _ chaos.System = (*ChaosSystem)(nil)

// NewChaosSystem wraps c, whose agents gossip over n and all run.
func NewChaosSystem(c *Cluster, n *gossiptest.Network) *ChaosSystem {
	s := newChaosSystem(c, n, &http.Client{Timeout: 10 * time.Second},
		func(a *agent.Agent, path string) string { return "http://" + a.HTTPAddr() + path })
	c.t.Cleanup(s.client.CloseIdleConnections)
	return s
}

// NewChaosSystemInMemory wraps c, whose agents were started with m's
// Option and all run.
func NewChaosSystemInMemory(c *Cluster, m *Memory) *ChaosSystem {
	return newChaosSystem(c, m.Net, m.Client(), m.URL)
}

func newChaosSystem(c *Cluster, n *gossiptest.Network, client *http.Client, url func(*agent.Agent, string) string) *ChaosSystem {
	s := &ChaosSystem{c: c, net: n, client: client, url: url}
	for i := range c.Len() {
		s.addrs = append(s.addrs, c.Agent(i).GossipAddr())
	}
	return s
}

func (s *ChaosSystem) Names() []string {
	out := make([]string, s.c.Len())
	for i := range out {
		out[i] = s.c.Name(i)
	}
	return out
}

func (s *ChaosSystem) Running(i int) bool           { return s.c.Agent(i) != nil }
func (s *ChaosSystem) Crash(i int)                  { s.c.Crash(i) }
func (s *ChaosSystem) Leave(i int)                  { s.c.Leave(i) }
func (s *ChaosSystem) Network() *gossiptest.Network { return s.net }

// Restart starts agent i with retry-join to every other slot, not a join
// to one: the one picked may be across a partition, and a failed --join is
// fatal.
func (s *ChaosSystem) Restart(i int) error {
	var others []string
	for j := range s.c.Len() {
		if j != i {
			others = append(others, s.addrs[j])
		}
	}
	s.c.RestartWith(i, func(cfg *agent.Config) { cfg.Join, cfg.RetryJoin = nil, others })
	return nil
}

func (s *ChaosSystem) Replicas() []chaos.Replica {
	var out []chaos.Replica
	for _, i := range s.c.Running() {
		a := s.c.Agent(i)
		out = append(out, chaos.Replica{Name: a.Name(), Table: a.Table(), Members: a.Gossip().Members})
	}
	return out
}

func (s *ChaosSystem) Register(i int, r chaos.Registration) error {
	a := s.c.Agent(i)
	if r.URL != "" {
		body := map[string]string{"url": r.URL}
		if r.TTL > 0 {
			body["ttl"] = r.TTL.String()
		}
		_, err := s.do(a, "PUT", "/v1/urls", body)
		return err
	}
	reg := httpapi.BrokerRegistration{Cluster: r.Cluster, BrokerName: r.BrokerName, BrokerID: r.BrokerID, Addr: r.Addr,
		Topics: map[string]httpapi.TopicConfig{}}
	rq, wq, perm := chaos.TopicConfig()
	for _, t := range r.Topics {
		reg.Topics[t] = httpapi.TopicConfig{ReadQueueNums: rq, WriteQueueNums: wq, Perm: perm}
	}
	_, err := agent.Door[*httpapi.Server](a).RegisterBroker(reg, r.TTL)
	return err
}

func (s *ChaosSystem) Unregister(i int, r chaos.Registration) (bool, error) {
	a := s.c.Agent(i)
	if r.URL != "" {
		status, err := s.do(a, "DELETE", "/v1/urls?url="+url.QueryEscape(r.URL), nil)
		if status == http.StatusNotFound {
			return false, nil
		}
		return err == nil, err
	}
	return agent.Door[*httpapi.Server](a).UnregisterBroker(r.Cluster, r.BrokerName, r.BrokerID)
}

// do makes one API call; any status but 200 is an error, except 404,
// which is returned for the caller to judge.
func (s *ChaosSystem) do(a *agent.Agent, method, path string, body any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url(a, path), rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
		return resp.StatusCode, nil
	case http.StatusNotFound:
		return resp.StatusCode, fmt.Errorf("%s %s: 404 %s", method, path, msg)
	}
	return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, msg)
}
