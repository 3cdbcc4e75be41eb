package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/hashicorp/serf/coordinate"

	"github.com/namecast/namecast/agent/host"
	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/routes"
)

// loneAgent is an agent alone in its cluster, as the door sees it: one
// member, no one to join, no keyring.
type loneAgent struct{}

func (loneAgent) Members() []gossip.Member {
	return []gossip.Member{{Name: "lone", Addr: "127.0.0.1:7946", Status: gossip.StatusAlive}}
}
func (loneAgent) AliveMembers() int { return 1 }
func (loneAgent) Join([]string) (int, error) {
	return 0, errors.New("no one to join in this test")
}
func (loneAgent) Coordinates() (*coordinate.Coordinate, map[string]*coordinate.Coordinate) {
	return coordinate.NewCoordinate(coordinate.DefaultConfig()), nil
}
func (loneAgent) Info() (AgentInfo, error) { return AgentInfo{Node: "lone", Ready: true}, nil }
func (loneAgent) RequestLeave()            {}
func (loneAgent) Leaving() bool            { return false }
func (loneAgent) ChangeKeys(ctx context.Context, op, key string) (any, error) {
	return nil, errors.New("gossip encryption is off in this test")
}
func (loneAgent) Metrics() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
}

// startLone starts the HTTP door of a lone agent over a fresh table (no
// gossip) on a free loopback port. The test's cleanup stops it.
func startLone(t testing.TB) *Server {
	t.Helper()
	h := host.New(host.Config{Table: routes.NewTable("lone", 1)})
	s, err := New(Config{Host: h, Agent: loneAgent{}, Node: "lone", Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
