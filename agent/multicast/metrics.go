package multicast

import (
	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/multicast/mcwire"
)

// The door's series on /metrics (namecast_multicast_*), counted as they
// happen (datagrams are few):
//
//   - datagrams{verb}: datagrams read, by verb; bad{why}: dropped as
//     unreadable (verb, cut, url, record); ignored{why}: from another
//     host (elsewhere), whose agent serves it.
//   - refused{why}: registrations not taken: budget (the agent's record
//     budget), sender (multicast_max_per_sender), rules (the rules'
//     bound), unsaved (the data dir).
//   - answers, announced: datagrams sent; too_long: URLs not sent, past
//     Dubbo's 2048-byte receive buffer; answers_cut: subscribes answered
//     with the first maxAnswers only; announce_dropped: changes not
//     announced (maxPending); send_errors.
//   - withdrawn: providers withdrawn by the liveness check; held (gauge):
//     registrations held for this host's processes.
type stats struct {
	m *metrics.Metrics
}

// zero are the counters exported at 0 from the start, so that a rate
// sees the first.
var zero = []struct{ name, label, value string }{
	{"bad", "why", "verb"}, {"bad", "why", "cut"}, {"bad", "why", "url"}, {"bad", "why", "record"},
	{"refused", "why", "budget"}, {"refused", "why", "sender"}, {"refused", "why", "unsaved"},
	{"ignored", "why", "elsewhere"}, {"answers", "", ""}, {"announced", "", ""}, {"withdrawn", "", ""}, {"send_errors", "", ""}, {"too_long", "", ""},
}

func (st *stats) init(m *metrics.Metrics) {
	st.m = m
	for _, z := range zero {
		st.add2(z.name, z.label, z.value, 0)
	}
	st.gauge("held", 0)
}

func (st *stats) datagram(v mcwire.Verb) { st.incr("datagrams", "verb", string(v)) }

func (st *stats) incr(name, label, value string) { st.add2(name, label, value, 1) }

func (st *stats) add(name string, n uint64) { st.add2(name, "", "", float32(n)) }

func (st *stats) add2(name, label, value string, n float32) {
	if st.m == nil {
		return
	}
	var labels []metrics.Label
	if label != "" {
		labels = []metrics.Label{{Name: label, Value: value}}
	}
	st.m.IncrCounterWithLabels([]string{"multicast", name}, n, labels)
}

func (st *stats) gauge(name string, v int) {
	if st.m != nil {
		st.m.SetGauge([]string{"multicast", name}, float32(v))
	}
}
