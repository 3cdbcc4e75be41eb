package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/gossip"
)

// What a NameServer knows of each broker (its last registration and when
// it expires) only the agent holding the broker knows: its RocketMQ door
// (last heartbeat + the broker's timeout) or its HTTP door (the TTL).
// GET /v1/brokers/leases answers for this agent's brokers; GET
// /v1/brokers?leases asks each broker's holding agent (the record's
// origin, at its member's http= tag) and answers "unknown" for any that
// does not answer within leaseAskTimeout. Every agent gives durations
// computed on its own clock: no two hosts' clocks are compared.

// leaseAskTimeout bounds a peer's answer to the Clusters page's fan-out.
const leaseAskTimeout = time.Second

// maxLeasesBody bounds a peer's answer.
const maxLeasesBody = 8 << 20

// BrokerLease is one broker this agent holds: when its client last
// registered it (a RocketMQ heartbeat counts) and when it expires (none:
// until withdrawn), on this agent's clock, with the durations from now.
type BrokerLease struct {
	Cluster         string    `json:"cluster"`
	BrokerName      string    `json:"brokerName"`
	BrokerID        int64     `json:"brokerId"`
	Addr            string    `json:"addr"`
	Door            string    `json:"door"`
	Registered      time.Time `json:"registered,omitzero"`
	Expires         time.Time `json:"expires,omitzero"`
	RegisteredAgoMs int64     `json:"registeredAgoMs"`
	ExpiresInMs     *int64    `json:"expiresInMs,omitempty"`
}

// LeaseView is GET /v1/brokers/leases.
type LeaseView struct {
	Node    string        `json:"node"`
	Brokers []BrokerLease `json:"brokers"`
}

type leaseLister interface{ Leases() []lease.Lease }

func (s *Server) localBrokerLeases() LeaseView {
	out := LeaseView{Node: s.cfg.Node, Brokers: []BrokerLease{}}
	ll, ok := s.host.(leaseLister)
	if !ok {
		return out
	}
	now := time.Now()
	for _, l := range ll.Leases() {
		for _, k := range l.Keys {
			rec, ok := s.table.LocalRecord(k)
			if !ok || rec.Broker == nil {
				continue
			}
			b := rec.Broker
			bl := BrokerLease{Cluster: b.Cluster, BrokerName: b.Name, BrokerID: b.ID, Addr: b.Addr, Door: l.Door,
				Registered: l.Renewed, Expires: l.Deadline}
			if !l.Renewed.IsZero() {
				bl.RegisteredAgoMs = now.Sub(l.Renewed).Milliseconds()
			}
			if !l.Deadline.IsZero() {
				in := l.Deadline.Sub(now).Milliseconds()
				bl.ExpiresInMs = &in
			}
			out.Brokers = append(out.Brokers, bl)
		}
	}
	sort.Slice(out.Brokers, func(i, j int) bool {
		a, b := out.Brokers[i], out.Brokers[j]
		if a.BrokerName != b.BrokerName {
			return a.BrokerName < b.BrokerName
		}
		return a.BrokerID < b.BrokerID
	})
	return out
}

func (s *Server) getBrokerLeases(r *http.Request) (any, error) { return s.localBrokerLeases(), nil }

// leasesOf asks every origin for the brokers it holds, in parallel:
// this agent answers itself; an origin that is not a live member with an
// http= tag, or does not answer in time, is left out (unknown).
func (s *Server) leasesOf(ctx context.Context, origins []string) map[string]LeaseView {
	addrs := map[string]string{}
	for _, m := range s.agent.Members() {
		if m.Status == gossip.StatusAlive && m.Tags["http"] != "" {
			addrs[m.Name] = dialable(m.Tags["http"], m.Addr)
		}
	}
	out := map[string]LeaseView{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, o := range origins {
		if o == s.cfg.Node {
			out[o] = s.localBrokerLeases()
			continue
		}
		addr, ok := addrs[o]
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := askLeases(ctx, addr); err == nil {
				mu.Lock()
				out[o] = v
				mu.Unlock()
			} else {
				s.log.Debug("asking a broker's agent for its leases failed", "node", o, "addr", addr, "err", err)
			}
		}()
	}
	wg.Wait()
	return out
}

// dialable is a member's HTTP address as this agent can dial it: an
// unspecified host (listening on every interface) is the member's gossip
// host.
func dialable(httpAddr, gossipAddr string) string {
	h, p, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return httpAddr
	}
	if ip := net.ParseIP(h); h == "" || ip != nil && ip.IsUnspecified() {
		if gh, _, err := net.SplitHostPort(gossipAddr); err == nil {
			return net.JoinHostPort(gh, p)
		}
	}
	return httpAddr
}

var leaseClient = &http.Client{Timeout: leaseAskTimeout}

func askLeases(ctx context.Context, addr string) (LeaseView, error) {
	ctx, cancel := context.WithTimeout(ctx, leaseAskTimeout)
	defer cancel()
	var v LeaseView
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/brokers/leases", nil)
	if err != nil {
		return v, err
	}
	resp, err := leaseClient.Do(req)
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return v, &httpError{resp.StatusCode, "peer answered " + resp.Status}
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, maxLeasesBody)).Decode(&v)
	return v, err
}
