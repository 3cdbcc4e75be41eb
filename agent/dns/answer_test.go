package dns

import (
	"slices"
	"strconv"
	"testing"

	miekg "github.com/miekg/dns"
)

// The answers below are Consul's (agent/dns.go of Consul 1.x, and its DNS
// interface docs): what a client of Consul's DNS gets for each name.

func TestServiceAIsEveryInstanceNotCritical(t *testing.T) {
	a := testAnswerer(testCatalog())
	m := ask(t, a, query("web.service.consul.", miekg.TypeA), false)
	if m.Rcode != miekg.RcodeSuccess || !m.Authoritative || m.RecursionAvailable {
		t.Fatalf("rcode %d aa %v ra %v", m.Rcode, m.Authoritative, m.RecursionAvailable)
	}
	if got := addrs(m.Answer); !slices.Equal(got, []string{"10.0.0.1", "10.0.0.2"}) {
		t.Fatalf("answer %v, want the passing and the warning instance", got)
	}
	for _, rr := range m.Answer {
		if rr.Header().Name != "web.service.consul." || rr.Header().Ttl != 0 {
			t.Fatalf("record %v: want the question's name and TTL 0 (Consul's service_ttl)", rr)
		}
	}
	a.cfg.OnlyPassing = true
	m = ask(t, a, query("web.service.consul.", miekg.TypeA), false)
	if got := addrs(m.Answer); !slices.Equal(got, []string{"10.0.0.1"}) {
		t.Fatalf("only_passing: answer %v", got)
	}
}

func TestUnknownOrCriticalServiceIsNXDOMAINWithSOA(t *testing.T) {
	a := testAnswerer(testCatalog())
	for _, name := range []string{"nope.service.consul.", "down.service.consul.", "nope.node.consul.", "consul.",
		"web.service.dc2.consul.", "web.service.dc1.x.consul.", "db.query.consul.", "web.connect.consul.", "zz.addr.consul.",
		"1.0.0.10.in-addr.arpa."} {
		m := ask(t, a, query(name, miekg.TypeA), false)
		if m.Rcode != miekg.RcodeNameError || len(m.Answer) != 0 {
			t.Errorf("%s: rcode %s answer %v, want NXDOMAIN", name, miekg.RcodeToString[m.Rcode], m.Answer)
			continue
		}
		wantSOA(t, m)
	}
}

func TestNameOutsideTheZoneIsRefused(t *testing.T) {
	m := ask(t, testAnswerer(testCatalog()), query("example.com.", miekg.TypeA), false)
	if m.Rcode != miekg.RcodeRefused || len(m.Answer)+len(m.Ns) != 0 {
		t.Fatalf("rcode %s answer %v ns %v, want REFUSED (no recursors)", miekg.RcodeToString[m.Rcode], m.Answer, m.Ns)
	}
}

func TestWrongFamilyIsNODATAWithSOA(t *testing.T) {
	a := testAnswerer(testCatalog())
	m := ask(t, a, query("web.service.consul.", miekg.TypeAAAA), false)
	if m.Rcode != miekg.RcodeSuccess || len(m.Answer) != 0 {
		t.Fatalf("AAAA of an IPv4 service: rcode %s answer %v, want NOERROR and no answer", miekg.RcodeToString[m.Rcode], m.Answer)
	}
	wantSOA(t, m)
	m = ask(t, a, query("api.service.consul.", miekg.TypeAAAA), false)
	if got := addrs(m.Answer); !slices.Equal(got, []string{"fd00::5"}) {
		t.Fatalf("AAAA: %v", got)
	}
}

func TestSRVTargetsTheNodeWithItsAddressInAdditional(t *testing.T) {
	a := testAnswerer(testCatalog())
	for _, name := range []string{"_web._tcp.service.consul.", "web.service.consul.", "_web._tcp.consul.", "web.service.dc1.consul."} {
		m := ask(t, a, query(name, miekg.TypeSRV), false)
		if m.Rcode != miekg.RcodeSuccess || len(m.Answer) != 2 || len(m.Extra) != 2 {
			t.Fatalf("%s: rcode %d answer %v extra %v", name, m.Rcode, m.Answer, m.Extra)
		}
		targets := map[string]string{}
		for _, rr := range m.Extra {
			targets[rr.Header().Name] = addrs([]miekg.RR{rr})[0]
		}
		for _, rr := range m.Answer {
			srv := rr.(*miekg.SRV)
			if srv.Hdr.Name != name || srv.Port != 8080 || srv.Priority != 1 || srv.Weight != 1 {
				t.Fatalf("%s: %v", name, srv)
			}
			want := map[string]string{"agent-a.node.dc1.consul.": "10.0.0.1", "agent-b.node.dc1.consul.": "10.0.0.2"}[srv.Target]
			if want == "" || targets[srv.Target] != want {
				t.Fatalf("%s: SRV target %s, additional %v", name, srv.Target, targets)
			}
		}
	}
}

func TestSRVOfAServiceAddressTargetsHexAddr(t *testing.T) {
	a := testAnswerer(testCatalog())
	m := ask(t, a, query("_mq._tcp.service.consul.", miekg.TypeSRV), false)
	if len(m.Answer) != 1 || len(m.Extra) != 1 {
		t.Fatalf("answer %v extra %v", m.Answer, m.Extra)
	}
	if srv := m.Answer[0].(*miekg.SRV); srv.Target != "c0000207.addr.dc1.consul." || srv.Port != 10911 {
		t.Fatalf("SRV %v, want target c0000207.addr.dc1.consul. (192.0.2.7)", srv)
	}
	if m.Extra[0].Header().Name != "c0000207.addr.dc1.consul." || addrs(m.Extra)[0] != "192.0.2.7" {
		t.Fatalf("extra %v", m.Extra)
	}
	// The target resolves through the door itself.
	m = ask(t, a, query("c0000207.addr.dc1.consul.", miekg.TypeA), false)
	if got := addrs(m.Answer); !slices.Equal(got, []string{"192.0.2.7"}) {
		t.Fatalf("addr lookup: %v", got)
	}
	m = ask(t, a, query("_api._tcp.service.consul.", miekg.TypeSRV), false)
	if srv := m.Answer[0].(*miekg.SRV); srv.Target != "fd000000000000000000000000000005.addr.dc1.consul." {
		t.Fatalf("IPv6 SRV %v", srv)
	}
}

func TestServiceKnownByHostNameIsCNAME(t *testing.T) {
	a := testAnswerer(testCatalog())
	m := ask(t, a, query("db.service.consul.", miekg.TypeA), false)
	if len(m.Answer) != 1 {
		t.Fatalf("answer %v", m.Answer)
	}
	if c, ok := m.Answer[0].(*miekg.CNAME); !ok || c.Target != "db.example.com." {
		t.Fatalf("answer %v, want a CNAME to db.example.com.", m.Answer[0])
	}
	m = ask(t, a, query("db.service.consul.", miekg.TypeSRV), false)
	if srv := m.Answer[0].(*miekg.SRV); srv.Target != "db.example.com." || len(m.Extra) != 0 {
		t.Fatalf("SRV %v extra %v", srv, m.Extra)
	}
}

func TestTagFiltersInstances(t *testing.T) {
	a := testAnswerer(testCatalog())
	m := ask(t, a, query("primary.web.service.consul.", miekg.TypeA), false)
	if got := addrs(m.Answer); !slices.Equal(got, []string{"10.0.0.1"}) {
		t.Fatalf("primary.web: %v (the critical primary is left out)", got)
	}
	m = ask(t, a, query("V1.Web.Service.Consul.", miekg.TypeA), false)
	if got := addrs(m.Answer); !slices.Equal(got, []string{"10.0.0.1", "10.0.0.2"}) {
		t.Fatalf("v1.web, any case: %v", got)
	}
	if m.Answer[0].Header().Name != "V1.Web.Service.Consul." {
		t.Fatalf("answer named %q, want the question's spelling", m.Answer[0].Header().Name)
	}
	m = ask(t, a, query("_web._primary.service.consul.", miekg.TypeSRV), false)
	if len(m.Answer) != 1 || m.Answer[0].(*miekg.SRV).Target != "agent-a.node.dc1.consul." {
		t.Fatalf("RFC 2782 tag: %v", m.Answer)
	}
	m = ask(t, a, query("nope.web.service.consul.", miekg.TypeA), false)
	if m.Rcode != miekg.RcodeNameError {
		t.Fatalf("unknown tag: rcode %d", m.Rcode)
	}
	wantSOA(t, m)
}

func TestNodeLookup(t *testing.T) {
	a := testAnswerer(testCatalog())
	m := ask(t, a, query("agent-a.node.consul.", miekg.TypeA), false)
	if got := addrs(m.Answer); !slices.Equal(got, []string{"10.0.0.1"}) || m.Answer[0].Header().Name != "agent-a.node.consul." {
		t.Fatalf("node A: %v", m.Answer)
	}
	m = ask(t, a, query("agent-6.node.dc1.consul.", miekg.TypeAAAA), false)
	if got := addrs(m.Answer); !slices.Equal(got, []string{"fd00::6"}) {
		t.Fatalf("node AAAA: %v", m.Answer)
	}
	// A node asked for a type it has none of: NOERROR, no answer, and (as
	// Consul) no SOA.
	m = ask(t, a, query("agent-a.node.consul.", miekg.TypeAAAA), false)
	if m.Rcode != miekg.RcodeSuccess || len(m.Answer) != 0 {
		t.Fatalf("node AAAA of an IPv4 node: %v", m)
	}
	m = ask(t, a, query("agent-a.node.consul.", miekg.TypeMX), false)
	if m.Rcode != miekg.RcodeSuccess || len(m.Answer) != 0 {
		t.Fatalf("node MX: %v", m)
	}
}

func TestSOAOfTheZone(t *testing.T) {
	m := ask(t, testAnswerer(testCatalog()), query("consul.", miekg.TypeSOA), false)
	if m.Rcode != miekg.RcodeSuccess || len(m.Answer) != 1 {
		t.Fatalf("SOA: %v", m)
	}
	if soa, ok := m.Answer[0].(*miekg.SOA); !ok || soa.Ns != "ns.consul." {
		t.Fatalf("SOA: %v", m.Answer[0])
	}
}

// manyCatalog has n passing instances of "big", each on its own node.
func manyCatalog(n int) *fakeCatalog {
	c := &fakeCatalog{services: map[string][]Instance{}}
	for i := range n {
		ip := "10.1." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250+1)
		c.services["big"] = append(c.services["big"], Instance{Node: "node-with-a-long-name-" + strconv.Itoa(i), NodeAddr: ip, Port: 80, Status: Passing})
	}
	return c
}

func TestUDPAnswersAreCutAsConsulCutsThem(t *testing.T) {
	a := testAnswerer(manyCatalog(40))
	m := ask(t, a, query("big.service.consul.", miekg.TypeA), false)
	if len(m.Answer) != 3 || m.Truncated {
		t.Fatalf("UDP without EDNS: %d answers, TC %v; want udp_answer_limit 3 and no TC (enable_truncate false)", len(m.Answer), m.Truncated)
	}
	a.cfg.EnableTruncate = true
	m = ask(t, a, query("big.service.consul.", miekg.TypeA), false)
	if len(m.Answer) != 3 || !m.Truncated {
		t.Fatalf("enable_truncate: %d answers, TC %v", len(m.Answer), m.Truncated)
	}
	m = ask(t, a, query("big.service.consul.", miekg.TypeA), true)
	if len(m.Answer) != 40 || m.Truncated {
		t.Fatalf("TCP: %d answers, TC %v; want all 40", len(m.Answer), m.Truncated)
	}
	req := query("big.service.consul.", miekg.TypeA)
	req.SetEdns0(4096, false)
	m = ask(t, a, req, false)
	if len(m.Answer) != 40 || m.Truncated || m.IsEdns0() == nil {
		t.Fatalf("EDNS 4096: %d answers, TC %v, OPT %v; want all 40", len(m.Answer), m.Truncated, m.IsEdns0())
	}
}

func TestCutSRVKeepsTheAdditionalRecordsOfWhatIsLeft(t *testing.T) {
	a := testAnswerer(manyCatalog(300))
	a.cfg.EnableTruncate = true
	for _, edns := range []uint16{0, 1232} {
		req := query("_big._tcp.service.consul.", miekg.TypeSRV)
		if edns > 0 {
			req.SetEdns0(edns, false)
		}
		m := ask(t, a, req, false)
		if !m.Truncated || len(m.Answer) == 0 || len(m.Answer) >= 300 {
			t.Fatalf("EDNS %d: %d answers, TC %v", edns, len(m.Answer), m.Truncated)
		}
		extra := 0
		for _, rr := range m.Extra {
			if _, ok := rr.(*miekg.OPT); !ok {
				extra++
			}
		}
		if extra != len(m.Answer) {
			t.Fatalf("EDNS %d: %d SRV answers, %d additional address records", edns, len(m.Answer), extra)
		}
	}
	m := ask(t, a, query("_big._tcp.service.consul.", miekg.TypeSRV), true)
	if len(m.Answer) != 300 || len(m.Extra) != 300 {
		t.Fatalf("TCP: %d answers %d extra, want 300", len(m.Answer), len(m.Extra))
	}
}
