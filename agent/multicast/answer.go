package multicast

import (
	"net/netip"
	"strings"

	"github.com/namecast/namecast/agent/multicast/mcwire"
	"github.com/namecast/namecast/dubbo"
)

// maxAnswers bounds the answers to one subscribe (an admin's interface=*
// matches every URL of the cluster).
const maxAnswers = 10000

// answer answers a subscriber of this host as every Dubbo holder of a
// matching URL answers it (multicast §4): "register <url>" for each URL
// of the cluster that matches (UrlUtils.isMatch: dubbo.Match), unicast to
// the sender's address and port, or multicast (TTL 0: to this host's
// group members) when the subscriber asked unicast=false or sent from one
// of the host's own addresses, as Dubbo answers a subscriber on its own
// host (NetUtils.getLocalHost, never a loopback address). Only a
// subscriber sending from loopback is answered by unicast: a unicast
// reaches one of the sockets on the group port, which is why Dubbo
// multicasts to its own host.
func (s *Server) answer(sub dubbo.URL, from netip.AddrPort) {
	toGroup := !unicast(sub) || !from.Addr().IsLoopback()
	n := 0
	for _, u := range s.matching(sub) {
		if n == maxAnswers {
			s.stats.incr("answers_cut", "", "")
			break
		}
		if !mcwire.Fits(mcwire.Register, u) {
			s.stats.incr("too_long", "", "")
			continue
		}
		b := mcwire.Format(mcwire.Register, u)
		var err error
		if toGroup {
			err = s.out.multicast(b)
		} else {
			err = s.out.unicast(b, from)
		}
		s.sent("answers", err)
		n++
	}
}

// unicast is Dubbo's url.getParameter("unicast", true): absent or empty
// is true, any other value true only when it reads "true".
func unicast(sub dubbo.URL) bool {
	v := sub.Param("unicast", "")
	return v == "" || strings.EqualFold(v, "true")
}

// matching lists the URLs of the cluster sub receives, in the table's
// order (by interface, then URL).
func (s *Server) matching(sub dubbo.URL) []dubbo.URL {
	ifaces := []string{sub.Interface()}
	if sub.Interface() == dubbo.Any {
		ifaces = s.table.Services()
	}
	var out []dubbo.URL
	for _, iface := range ifaces {
		for _, raw := range s.table.URLs(iface, "") {
			u, err := dubbo.Parse(raw)
			if err == nil && dubbo.Match(sub, u) {
				out = append(out, u)
			}
		}
	}
	return out
}

// sent counts one datagram sent (or not) as series, and says a failure
// at most once a while.
func (s *Server) sent(series string, err error) {
	if err != nil {
		s.stats.incr("send_errors", "", "")
		if s.sendLog.Allow() {
			s.log.Warn("multicast door: a datagram could not be sent (said at most every 10 s)", "err", err)
		}
		return
	}
	s.stats.incr(series, "", "")
}
