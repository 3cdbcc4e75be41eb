package dns

import (
	"testing"

	miekg "github.com/miekg/dns"
)

// FuzzReply feeds the door's query path (decode, answer, trim, pack) any
// bytes: it must not panic, and whatever it answers must be a DNS
// message with the query's id that fits the transport.
func FuzzReply(f *testing.F) {
	for _, q := range []*miekg.Msg{
		query("web.service.consul.", miekg.TypeA), query("_web._tcp.service.consul.", miekg.TypeSRV),
		query("primary.web.service.dc1.consul.", miekg.TypeANY), query("agent-a.node.consul.", miekg.TypeAAAA),
		query("c0000207.addr.dc1.consul.", miekg.TypeTXT), query("big.service.consul.", miekg.TypeA),
		query("example.com.", miekg.TypeNS), query("consul.", miekg.TypeSOA),
	} {
		b, _ := q.Pack()
		f.Add(b, false)
		q.SetEdns0(1232, false)
		b, _ = q.Pack()
		f.Add(b, true)
	}
	cat := testCatalog()
	cat.services["big"] = manyCatalog(200).services["big"]
	s := &Server{ans: *testAnswerer(cat)}
	s.ans.cfg.EnableTruncate = true
	s.stats.init()
	f.Fuzz(func(t *testing.T, b []byte, tcp bool) {
		out := s.reply(b, tcp)
		if out == nil {
			return
		}
		m := new(miekg.Msg)
		if err := m.Unpack(out); err != nil {
			t.Fatalf("reply does not unpack: %v", err)
		}
		if len(b) >= 2 && m.Id != uint16(b[0])<<8|uint16(b[1]) {
			t.Fatalf("reply id %d to query %x", m.Id, b[:2])
		}
		if len(out) > 65535 {
			t.Fatalf("reply of %d bytes", len(out))
		}
	})
}
