package dns

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	miekg "github.com/miekg/dns"
)

// fakeCatalog is a Catalog over fixed instances, keyed by service name
// (lower case).
type fakeCatalog struct {
	services map[string][]Instance
	nodes    map[string]Node
}

func (c *fakeCatalog) Instances(name string) []Instance {
	return append([]Instance(nil), c.services[strings.ToLower(name)]...)
}

func (c *fakeCatalog) Node(name string) (Node, bool) {
	n, ok := c.nodes[strings.ToLower(name)]
	return n, ok
}

// testCatalog: web on three nodes (one warning, one critical), api with
// its own IPv6 address, db known by a host name, and the nodes.
func testCatalog() *fakeCatalog {
	return &fakeCatalog{
		services: map[string][]Instance{
			"web": {
				{Node: "agent-a", NodeAddr: "10.0.0.1", Port: 8080, Tags: []string{"primary", "v1"}, Status: Passing},
				{Node: "agent-b", NodeAddr: "10.0.0.2", Port: 8080, Tags: []string{"v1"}, Status: Warning},
				{Node: "agent-c", NodeAddr: "10.0.0.3", Port: 8080, Tags: []string{"primary"}, Status: Critical},
			},
			"api":  {{Node: "agent-a", NodeAddr: "10.0.0.1", Address: "fd00::5", Port: 9000, Status: Passing}},
			"db":   {{Node: "agent-b", NodeAddr: "10.0.0.2", Address: "db.example.com", Port: 5432, Status: Passing}},
			"down": {{Node: "agent-a", NodeAddr: "10.0.0.1", Port: 1, Status: Critical}},
			"mq":   {{Node: "agent-b", NodeAddr: "10.0.0.2", Address: "192.0.2.7", Port: 10911, Status: Passing}},
		},
		nodes: map[string]Node{"agent-a": {"agent-a", "10.0.0.1"}, "agent-b": {"agent-b", "10.0.0.2"}, "agent-6": {"agent-6", "fd00::6"}},
	}
}

func testAnswerer(cat Catalog) *answerer {
	return &answerer{cfg: Config{Domain: "consul.", Datacenter: "dc1", UDPAnswerLimit: 3}, cat: cat}
}

func query(name string, qtype uint16) *miekg.Msg {
	m := new(miekg.Msg)
	m.SetQuestion(name, qtype)
	return m
}

// ask answers name/qtype over UDP (tcp false) or TCP, through the wire:
// the query is packed and decoded, the reply packed and unpacked.
func ask(t *testing.T, a *answerer, req *miekg.Msg, tcp bool) *miekg.Msg {
	t.Helper()
	b, err := req.Pack()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ans: *a}
	s.stats.init()
	out := s.reply(b, tcp)
	if out == nil {
		t.Fatalf("no reply to %v", req.Question)
	}
	if !tcp && req.IsEdns0() == nil && len(out) > 512 {
		t.Errorf("UDP reply of %d bytes to a query without EDNS", len(out))
	}
	m := new(miekg.Msg)
	if err := m.Unpack(out); err != nil {
		t.Fatalf("reply does not unpack: %v", err)
	}
	if m.Id != req.Id || !m.Response {
		t.Fatalf("reply id %d response %v to query %d", m.Id, m.Response, req.Id)
	}
	return m
}

// addrs are the addresses of the A and AAAA records in rrs, sorted.
func addrs(rrs []miekg.RR) []string {
	var out []string
	for _, rr := range rrs {
		switch r := rr.(type) {
		case *miekg.A:
			out = append(out, r.A.String())
		case *miekg.AAAA:
			out = append(out, r.AAAA.String())
		}
	}
	slices.Sort(out)
	return out
}

// wantSOA checks that m's authority section is the zone's SOA, as
// Consul's negative answers carry it.
func wantSOA(t *testing.T, m *miekg.Msg) {
	t.Helper()
	if len(m.Ns) != 1 {
		t.Fatalf("authority %v, want the SOA", m.Ns)
	}
	soa, ok := m.Ns[0].(*miekg.SOA)
	if !ok || soa.Hdr.Name != "consul." || soa.Ns != "ns.consul." || soa.Mbox != "hostmaster.consul." ||
		soa.Refresh != 3600 || soa.Retry != 600 || soa.Expire != 86400 || soa.Minttl != 0 || soa.Hdr.Ttl != 0 {
		t.Fatalf("authority %v, want Consul's SOA", m.Ns[0])
	}
}

func testLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
