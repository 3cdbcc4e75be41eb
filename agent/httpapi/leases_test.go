package httpapi

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/routes"
)

// silentPeers is a lone agent that also sees "silent", whose HTTP door
// accepts connections and never answers.
type silentPeers struct {
	loneAgent
	silentHTTP string
}

func (a silentPeers) Members() []gossip.Member {
	return append(a.loneAgent.Members(),
		gossip.Member{Name: "silent", Addr: "127.0.0.1:7947", Status: gossip.StatusAlive, Tags: map[string]string{"http": a.silentHTTP}})
}

// TestLeasesOfLeavesOutWhoDoesNotAnswer: the Clusters page's fan-out
// answers within its timeout even when a holding agent hangs or is not a
// member; those are left out (the page shows "unknown"), this agent's own
// brokers are in.
func TestLeasesOfLeavesOutWhoDoesNotAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept and hold: the peer never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	h := host.New(host.Config{Table: routes.NewTable("lone", 1)})
	s, err := New(Config{Host: h, Agent: silentPeers{silentHTTP: ln.Addr().String()}, Node: "lone", Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	start := time.Now()
	got := s.leasesOf(context.Background(), []string{"lone", "silent", "gone"})
	if took := time.Since(start); took > 5*leaseAskTimeout {
		t.Errorf("the fan-out took %v, its timeout is %v", took, leaseAskTimeout)
	}
	if _, ok := got["lone"]; !ok {
		t.Errorf("this agent's own leases are missing: %v", got)
	}
	if _, ok := got["silent"]; ok {
		t.Errorf("a peer that never answered has leases: %v", got)
	}
	if _, ok := got["gone"]; ok {
		t.Errorf("a non-member has leases: %v", got)
	}
}

func TestDialableUsesGossipHostForUnspecified(t *testing.T) {
	for _, c := range []struct{ http, gossip, want string }{
		{"0.0.0.0:8500", "198.18.0.2:7946", "198.18.0.2:8500"},
		{"[::]:8500", "198.18.0.2:7946", "198.18.0.2:8500"},
		{"127.0.0.1:8500", "198.18.0.2:7946", "127.0.0.1:8500"},
	} {
		if got := dialable(c.http, c.gossip); got != c.want {
			t.Errorf("dialable(%q, %q) = %q, want %q", c.http, c.gossip, got, c.want)
		}
	}
}
