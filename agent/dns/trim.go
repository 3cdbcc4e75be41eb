package dns

import (
	"strings"

	miekg "github.com/miekg/dns"
)

// Consul's bounds on a reply: a UDP reply to a query without EDNS has at
// most min(8, UDPAnswerLimit) answers and fits 512 bytes uncompressed; with
// EDNS it fits the size the client offered (at most 65467); over TCP, 64
// KiB. Answers are cut from the end (they are shuffled), and the
// additional section keeps only what the remaining SRV targets need.
const (
	maxUDPAnswers   = 8
	minUDPSize      = 512
	maxUDPSize      = 65535 - 68
	maxTCPSize      = 65523
	maxTCPAnswers   = 4096
	maxTCPSRVs      = 1024
	udpHeaderLength = 8
)

// trim cuts m to what the transport carries, as Consul's trimDNSResponse
// does; the TC bit is set when a UDP reply was cut and EnableTruncate
// says so.
func (a *answerer) trim(req, m *miekg.Msg, tcp bool) {
	if tcp {
		trimTCP(req, m)
		return
	}
	if trimUDP(req, m, a.udpLimit()) && a.cfg.EnableTruncate {
		m.Truncated = true
	}
}

func (a *answerer) udpLimit() int {
	if a.cfg.UDPAnswerLimit <= 0 {
		return 3
	}
	return min(a.cfg.UDPAnswerLimit, maxUDPAnswers)
}

// trimUDP reports whether it cut any answer.
func trimUDP(req, m *miekg.Msg, limit int) bool {
	n := len(m.Answer)
	size := minUDPSize
	if opt := req.IsEdns0(); opt != nil && int(opt.UDPSize()) > size {
		size = int(opt.UDPSize())
	}
	size = min(size, maxUDPSize)
	index := extraIndex(m)
	compress := m.Compress
	if size == minUDPSize && n > limit {
		// Sized uncompressed, sent compressed: a reply that fits 512
		// bytes even for a server that expands it on the way.
		m.Compress = false
		m.Answer = m.Answer[:limit]
		syncExtra(index, m)
	}
	shrink(m, size-udpHeaderLength, index)
	m.Compress = compress
	return len(m.Answer) < n
}

// trimTCP reports whether it cut any answer.
func trimTCP(req, m *miekg.Msg) bool {
	n := len(m.Answer)
	limit := maxTCPAnswers
	if req.Question[0].Qtype == miekg.TypeSRV {
		limit = maxTCPSRVs
	}
	index := extraIndex(m)
	if len(m.Answer) > limit {
		m.Answer = m.Answer[:limit]
		syncExtra(index, m)
	}
	shrink(m, maxTCPSize, index)
	return len(m.Answer) < n
}

// shrink drops the authority section, then answers (the fewest, found by
// halving), until m packs within size; one answer is always kept.
func shrink(m *miekg.Msg, size int, index map[string]miekg.RR) {
	for len(m.Answer) > 1 && m.Len() > size {
		m.Ns = nil
		all := m.Answer
		lo, hi := 1, len(all) // m fits with lo answers (or lo is 1); not with hi
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			m.Answer = all[:mid]
			syncExtra(index, m)
			if m.Len() <= size {
				lo = mid
			} else {
				hi = mid
			}
		}
		m.Answer = all[:lo]
		syncExtra(index, m)
	}
}

// extraIndex indexes m's additional records by lower-case name, nil when
// it has none (then there is nothing to keep in step).
func extraIndex(m *miekg.Msg) map[string]miekg.RR {
	if len(m.Extra) == 0 {
		return nil
	}
	index := make(map[string]miekg.RR, len(m.Extra))
	for _, rr := range m.Extra {
		name := strings.ToLower(rr.Header().Name)
		if _, ok := index[name]; !ok {
			index[name] = rr
		}
	}
	return index
}

// syncExtra keeps in m's additional section only the records of the SRV
// targets its answers still name (Consul's syncExtra).
func syncExtra(index map[string]miekg.RR, m *miekg.Msg) {
	if index == nil {
		return
	}
	extra := make([]miekg.RR, 0, len(m.Answer))
	seen := make(map[string]bool, len(m.Answer))
	for _, rr := range m.Answer {
		srv, ok := rr.(*miekg.SRV)
		if !ok {
			continue
		}
		target := strings.ToLower(srv.Target)
		if seen[target] {
			continue
		}
		seen[target] = true
		if e, ok := index[target]; ok {
			extra = append(extra, e)
		}
	}
	m.Extra = extra
}
