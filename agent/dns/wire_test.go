package dns

import (
	"testing"

	miekg "github.com/miekg/dns"
)

// Queries Consul's server (miekg/dns's accept function) will not read.
func TestQueriesNotReadAreRefusedAsConsulRefusesThem(t *testing.T) {
	s := &Server{ans: *testAnswerer(testCatalog())}
	s.stats.init()
	pack := func(m *miekg.Msg) []byte {
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	resp := query("web.service.consul.", miekg.TypeA)
	resp.Response = true
	update := query("web.service.consul.", miekg.TypeA)
	update.Opcode = miekg.OpcodeUpdate
	two := query("web.service.consul.", miekg.TypeA)
	two.Question = append(two.Question, two.Question[0])
	none := query("web.service.consul.", miekg.TypeA)
	none.Question = nil
	cut := pack(query("web.service.consul.", miekg.TypeA))
	cut = cut[:len(cut)-3]
	for _, c := range []struct {
		name  string
		b     []byte
		rcode int // -1: no reply
	}{
		{"short", []byte{1, 2, 3}, -1},
		{"a response", pack(resp), -1},
		{"an update", pack(update), miekg.RcodeNotImplemented},
		{"two questions", pack(two), miekg.RcodeFormatError},
		{"no question", pack(none), miekg.RcodeFormatError},
		{"cut short", cut, miekg.RcodeFormatError},
	} {
		out := s.reply(c.b, false)
		if c.rcode < 0 {
			if out != nil {
				t.Errorf("%s: a reply, want none", c.name)
			}
			continue
		}
		m := new(miekg.Msg)
		if err := m.Unpack(out); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if m.Rcode != c.rcode || !m.Response || len(m.Answer) != 0 {
			t.Errorf("%s: rcode %s, want %s", c.name, miekg.RcodeToString[m.Rcode], miekg.RcodeToString[c.rcode])
		}
	}
}
