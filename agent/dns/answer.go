package dns

import (
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	miekg "github.com/miekg/dns"
)

// DefaultDomain and DefaultDatacenter are Consul's: names end in
// ".consul." and may spell the datacenter "dc1".
const (
	DefaultDomain     = "consul."
	DefaultDatacenter = "dc1"
)

// Config says how the door answers: Consul's dns_config settings that
// namecast keeps.
type Config struct {
	// Domain is the zone answered, "consul." by default (Consul's
	// domain); names outside it are refused (no recursors).
	Domain string
	// Datacenter is the one datacenter a name may spell
	// (NAME.service.DC.consul); another is not found.
	Datacenter string
	// OnlyPassing leaves out instances with a warning too, not only the
	// critical ones (Consul's dns_config.only_passing, default false).
	OnlyPassing bool
	// UDPAnswerLimit bounds the answers of a UDP reply to a query without
	// EDNS (Consul's dns_config.udp_answer_limit, default 3; at most 8).
	UDPAnswerLimit int
	// EnableTruncate sets the TC bit on a UDP reply that was cut
	// (Consul's dns_config.enable_truncate, default false).
	EnableTruncate bool
}

// The SOA Consul serves (dns_config.soa defaults): TTLs of 0 mean "do
// not cache", so an instance that fails is gone from the next answer.
const (
	soaRefresh = 3600
	soaRetry   = 600
	soaExpire  = 86400
	soaMinTTL  = 0
)

var (
	errNameNotFound = errors.New("name not found") // NXDOMAIN, SOA in authority
	errNoData       = errors.New("no records")     // NOERROR, empty answer, SOA in authority
)

// answerer answers one question from a Catalog, as Consul's DNS server
// does.
type answerer struct {
	cfg Config
	cat Catalog
}

// answer is the reply to req, a query with one question (decode checked
// it); tcp says the reply goes back over TCP (64 KiB) rather than UDP.
func (a *answerer) answer(req *miekg.Msg, tcp bool) *miekg.Msg {
	q := req.Question[0]
	m := new(miekg.Msg)
	m.SetReply(req)
	m.Compress = true
	m.Authoritative = true
	name := miekg.Fqdn(q.Name)
	if q.Qclass != miekg.ClassINET && q.Qclass != miekg.ClassANY || !a.inZone(strings.ToLower(name)) {
		// No recursors: Consul's mux refuses a name it does not serve.
		m.Authoritative = false
		m.Rcode = miekg.RcodeRefused
		return m
	}
	switch q.Qtype {
	case miekg.TypeSOA:
		m.Answer = append(m.Answer, a.soa())
	case miekg.TypeNS:
		// Consul names its servers; an agent of namecast has none.
	case miekg.TypeAXFR, miekg.TypeIXFR:
		m.Rcode = miekg.RcodeNotImplemented
	default:
		err := a.dispatch(q, name, m)
		switch {
		case errors.Is(err, errNameNotFound):
			m.Rcode = miekg.RcodeNameError
			m.Ns = append(m.Ns, a.soa())
		case errors.Is(err, errNoData):
			m.Ns = append(m.Ns, a.soa())
		}
	}
	a.trim(req, m, tcp)
	if opt := req.IsEdns0(); opt != nil {
		m.SetEdns0(opt.UDPSize(), false)
	}
	return m
}

// inZone reports whether name (lower case, fully qualified) is one the
// door answers: the domain and its subdomains, and reverse lookups.
func (a *answerer) inZone(name string) bool {
	return name == a.cfg.Domain || strings.HasSuffix(name, "."+a.cfg.Domain) ||
		strings.HasSuffix(name, ".in-addr.arpa.") || strings.HasSuffix(name, ".ip6.arpa.")
}

// soa is the zone's SOA record, which Consul adds to the authority section
// of every negative answer.
func (a *answerer) soa() *miekg.SOA {
	return &miekg.SOA{
		Hdr:     miekg.RR_Header{Name: a.cfg.Domain, Rrtype: miekg.TypeSOA, Class: miekg.ClassINET, Ttl: soaMinTTL},
		Ns:      "ns." + a.cfg.Domain,
		Mbox:    "hostmaster." + a.cfg.Domain,
		Serial:  uint32(time.Now().Unix()),
		Refresh: soaRefresh, Retry: soaRetry, Expire: soaExpire, Minttl: soaMinTTL,
	}
}

// dispatch parses name (in the zone, as the question spells it) and
// answers it into m:
//
//	[TAG.]NAME.service[.DC].DOMAIN     instances, A/AAAA (SRV when asked)
//	_NAME._TAG.service[.DC].DOMAIN     RFC 2782 SRV; _tcp means no tag
//	_NAME._TAG[.DC].DOMAIN             the same, for an SRV question
//	NODE.node[.DC].DOMAIN              a node's address
//	HEX.addr[.DC].DOMAIN               an address spelled in hex (SRV targets)
//
// Prepared queries, Connect, ingress and virtual names are not served:
// nothing matches them (NXDOMAIN), as with a Consul that has none.
func (a *answerer) dispatch(q miekg.Question, name string, m *miekg.Msg) error {
	if strings.HasSuffix(strings.ToLower(name), a.cfg.Domain) {
		name = name[:len(name)-len(a.cfg.Domain)]
	}
	labels := miekg.SplitDomainName(name)
	kind, parts, suffix := "", []string(nil), []string(nil)
	for i := len(labels) - 1; i >= 0 && kind == ""; i-- {
		switch l := strings.ToLower(labels[i]); l {
		case "service", "connect", "virtual", "ingress", "node", "query", "addr":
			kind, parts, suffix = l, labels[:i], labels[i+1:]
		default:
			if q.Qtype == miekg.TypeSRV && strings.HasPrefix(labels[i], "_") {
				kind, parts, suffix = "service", labels[:i+1], labels[i+1:]
			}
		}
	}
	if len(parts) == 0 || !a.ourDatacenter(suffix) {
		return errNameNotFound
	}
	switch kind {
	case "service":
		var svc, tag string
		if n := len(parts); n == 2 && strings.HasPrefix(parts[0], "_") && strings.HasPrefix(parts[1], "_") {
			svc, tag = parts[0][1:], parts[1][1:]
			if strings.EqualFold(tag, "tcp") {
				tag = ""
			}
		} else {
			svc, tag = parts[n-1], strings.Join(parts[:n-1], ".")
		}
		return a.service(q, svc, tag, m)
	case "node":
		return a.node(q, strings.Join(parts, "."), m)
	case "addr":
		return a.addr(q, parts, m)
	}
	return errNameNotFound
}

// ourDatacenter reports whether the labels after the kind name this
// datacenter or none.
func (a *answerer) ourDatacenter(suffix []string) bool {
	switch len(suffix) {
	case 0:
		return true
	case 1:
		return strings.EqualFold(suffix[0], a.cfg.Datacenter)
	}
	return false
}

// service answers the instances of svc carrying tag ("": any) that are
// healthy, shuffled, as SRV records with their addresses in the
// additional section when asked SRV, else as address records.
func (a *answerer) service(q miekg.Question, svc, tag string, m *miekg.Msg) error {
	var insts []Instance
	for _, inst := range a.cat.Instances(svc) {
		if healthy(inst.Status, a.cfg.OnlyPassing) && (tag == "" || hasTag(inst.Tags, tag)) {
			insts = append(insts, inst)
		}
	}
	if len(insts) == 0 {
		return errNameNotFound
	}
	rand.Shuffle(len(insts), func(i, j int) { insts[i], insts[j] = insts[j], insts[i] })
	if q.Qtype == miekg.TypeSRV {
		a.srvRecords(q, insts, m)
	} else {
		a.addrRecords(q, insts, m)
	}
	if len(m.Answer) == 0 {
		return errNoData
	}
	return nil
}

// srvRecords adds an SRV record per instance (once per node, address and
// port) and what its target resolves to.
func (a *answerer) srvRecords(q miekg.Question, insts []Instance, m *miekg.Msg) {
	seen := map[string]bool{}
	for _, inst := range insts {
		key := inst.Node + "|" + inst.Address + "|" + strconv.Itoa(inst.Port)
		if seen[key] {
			continue
		}
		seen[key] = true
		ans, extra := a.instanceRecords(q, inst)
		m.Answer = append(m.Answer, ans...)
		m.Extra = append(m.Extra, extra...)
	}
}

// addrRecords adds the address records of each instance, once each; an
// instance known only by a host name is answered with a CNAME, and only
// when no instance has an address.
func (a *answerer) addrRecords(q miekg.Question, insts []Instance, m *miekg.Msg) {
	seen := map[string]bool{}
	var cname []miekg.RR
	for _, inst := range insts {
		recs, _ := a.instanceRecords(q, inst)
		if len(recs) == 0 || seen[recs[0].String()] {
			continue
		}
		seen[recs[0].String()] = true
		if _, ok := recs[0].(*miekg.CNAME); ok {
			if cname == nil {
				cname = recs
			}
			continue
		}
		m.Answer = append(m.Answer, recs...)
	}
	if len(m.Answer) == 0 && cname != nil {
		m.Answer = cname
	}
}

// instanceRecords are the answer and additional records of one instance
// (Consul's makeNodeServiceRecords): by the node's name when it has no
// address of its own, by its address (HEX.addr) when it has one, by the
// host name it was given otherwise.
func (a *answerer) instanceRecords(q miekg.Question, inst Instance) (ans, extra []miekg.RR) {
	if inst.Address == "" && inst.NodeAddr == "" {
		return nil, nil
	}
	nodeIP, svcIP := net.ParseIP(inst.NodeAddr), net.ParseIP(inst.Address)
	switch {
	case inst.Address == "" && nodeIP != nil:
		return a.ipRecords(q, inst, nodeIP, a.nodeName(inst.Node))
	case inst.Address == "":
		return a.hostRecords(q, inst, inst.NodeAddr)
	case svcIP != nil:
		return a.ipRecords(q, inst, svcIP, a.addrName(svcIP))
	case miekg.Fqdn(inst.Address) == q.Name && nodeIP != nil:
		return a.ipRecords(q, inst, nodeIP, a.nodeName(inst.Node))
	}
	return a.hostRecords(q, inst, inst.Address)
}

// ipRecords: for SRV, an SRV to target and target's address record in
// the additional section; otherwise the address record under the
// question's name. None when the address is not of the family asked.
func (a *answerer) ipRecords(q miekg.Question, inst Instance, ip net.IP, target string) (ans, extra []miekg.RR) {
	rr := ipRecord(q.Qtype, ip)
	if rr == nil {
		return nil, nil
	}
	if q.Qtype == miekg.TypeSRV {
		rr.Header().Name = target
		return []miekg.RR{a.srv(q, inst, target)}, []miekg.RR{rr}
	}
	rr.Header().Name = q.Name
	return []miekg.RR{rr}, nil
}

// hostRecords: an instance whose address is a host name is an SRV to that
// name, or a CNAME to it. The door resolves no names outside its zone.
func (a *answerer) hostRecords(q miekg.Question, inst Instance, host string) (ans, extra []miekg.RR) {
	target := miekg.Fqdn(host)
	if q.Qtype == miekg.TypeSRV {
		return []miekg.RR{a.srv(q, inst, target)}, nil
	}
	return []miekg.RR{&miekg.CNAME{Hdr: miekg.RR_Header{Name: q.Name, Rrtype: miekg.TypeCNAME, Class: miekg.ClassINET}, Target: target}}, nil
}

func (a *answerer) srv(q miekg.Question, inst Instance, target string) *miekg.SRV {
	return &miekg.SRV{
		Hdr:      miekg.RR_Header{Name: q.Name, Rrtype: miekg.TypeSRV, Class: miekg.ClassINET},
		Priority: 1, Weight: inst.weight(), Port: uint16(inst.Port), Target: target,
	}
}

// ipRecord is ip's A or AAAA record, when a question of qtype takes it
// (Consul's makeARecord: SRV, ANY, NS and TXT take either), else nil.
func ipRecord(qtype uint16, ip net.IP) miekg.RR {
	either := qtype == miekg.TypeSRV || qtype == miekg.TypeANY || qtype == miekg.TypeNS || qtype == miekg.TypeTXT
	if v4 := ip.To4(); v4 != nil {
		if either || qtype == miekg.TypeA {
			return &miekg.A{Hdr: miekg.RR_Header{Rrtype: miekg.TypeA, Class: miekg.ClassINET}, A: v4}
		}
		return nil
	}
	if either || qtype == miekg.TypeAAAA {
		return &miekg.AAAA{Hdr: miekg.RR_Header{Rrtype: miekg.TypeAAAA, Class: miekg.ClassINET}, AAAA: ip}
	}
	return nil
}

// nodeName is node's canonical name, NODE.node.DC.DOMAIN.
func (a *answerer) nodeName(node string) string {
	return node + ".node." + a.cfg.Datacenter + "." + a.cfg.Domain
}

// addrName is ip spelled as Consul's SRV targets spell it, HEX.addr.DC.DOMAIN.
func (a *answerer) addrName(ip net.IP) string {
	b := []byte(ip)
	if v4 := ip.To4(); v4 != nil {
		b = v4
	}
	return hex.EncodeToString(b) + ".addr." + a.cfg.Datacenter + "." + a.cfg.Domain
}

// node answers NODE.node: the node's address for A, AAAA and ANY; nothing
// (NOERROR) for TXT, the node having no metadata, and other types.
func (a *answerer) node(q miekg.Question, name string, m *miekg.Msg) error {
	switch q.Qtype {
	case miekg.TypeANY, miekg.TypeA, miekg.TypeAAAA, miekg.TypeTXT:
	default:
		return nil
	}
	n, ok := a.cat.Node(name)
	if !ok {
		return errNameNotFound
	}
	if q.Qtype == miekg.TypeTXT {
		return nil
	}
	ip := net.ParseIP(n.Addr)
	if ip == nil {
		if n.Addr != "" {
			m.Answer = append(m.Answer, &miekg.CNAME{Hdr: miekg.RR_Header{Name: q.Name, Rrtype: miekg.TypeCNAME, Class: miekg.ClassINET}, Target: miekg.Fqdn(n.Addr)})
		}
		return nil
	}
	if rr := ipRecord(q.Qtype, ip); rr != nil {
		rr.Header().Name = q.Name
		m.Answer = append(m.Answer, rr)
	}
	return nil
}

// addr answers HEX.addr: the address the name spells, in the answer when
// asked its family (or ANY), else in the additional section.
func (a *answerer) addr(q miekg.Question, parts []string, m *miekg.Msg) error {
	if len(parts) != 1 {
		return errNameNotFound
	}
	b, err := hex.DecodeString(parts[0])
	if err != nil || len(b) != net.IPv4len && len(b) != net.IPv6len {
		return errNameNotFound
	}
	var rr miekg.RR
	want := miekg.TypeA
	if len(b) == net.IPv4len {
		rr = &miekg.A{Hdr: miekg.RR_Header{Name: q.Name, Rrtype: miekg.TypeA, Class: miekg.ClassINET}, A: net.IP(b)}
	} else {
		want = miekg.TypeAAAA
		rr = &miekg.AAAA{Hdr: miekg.RR_Header{Name: q.Name, Rrtype: miekg.TypeAAAA, Class: miekg.ClassINET}, AAAA: net.IP(b)}
	}
	if q.Qtype == want || q.Qtype == miekg.TypeANY {
		m.Answer = append(m.Answer, rr)
	} else {
		m.Extra = append(m.Extra, rr)
	}
	return nil
}
