package dns

import (
	"encoding/binary"

	miekg "github.com/miekg/dns"
)

// headerLen is the length of a DNS message's fixed header.
const headerLen = 12

// decode reads one query from b, as Consul's DNS server (miekg/dns's
// default accept function) takes it: a response, or anything shorter
// than a header, gets no reply (any reply can be used to amplify); an
// opcode other than QUERY gets NOTIMP; a query that is not exactly one
// question with at most one answer, no authority and two additional
// records (EDNS), or does not parse, gets FORMERR. Exactly one of req and
// reject is non-nil when ok.
func decode(b []byte) (req, reject *miekg.Msg, ok bool) {
	if len(b) < headerLen {
		return nil, nil, false
	}
	id := binary.BigEndian.Uint16(b[0:])
	bits := binary.BigEndian.Uint16(b[2:])
	qd, an, ns, ar := binary.BigEndian.Uint16(b[4:]), binary.BigEndian.Uint16(b[6:]), binary.BigEndian.Uint16(b[8:]), binary.BigEndian.Uint16(b[10:])
	if bits&(1<<15) != 0 { // QR: a response
		return nil, nil, false
	}
	opcode := int(bits>>11) & 0xF
	if opcode != miekg.OpcodeQuery {
		return nil, refusal(id, bits, opcode, miekg.RcodeNotImplemented), true
	}
	if qd != 1 || an > 1 || ns > 0 || ar > 2 {
		return nil, refusal(id, bits, opcode, miekg.RcodeFormatError), true
	}
	req = new(miekg.Msg)
	if err := req.Unpack(b); err != nil || len(req.Question) != 1 {
		return nil, refusal(id, bits, opcode, miekg.RcodeFormatError), true
	}
	return req, nil, true
}

// refusal is the bare reply to a query the door will not read.
func refusal(id, bits uint16, opcode, rcode int) *miekg.Msg {
	m := new(miekg.Msg)
	m.Id, m.Response, m.Opcode, m.Rcode = id, true, opcode, rcode
	m.RecursionDesired = bits&(1<<8) != 0
	return m
}
