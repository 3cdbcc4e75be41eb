package zookeeper

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Version is what srvr and mntr report as the server version.
const Version = "3.8.0-namecast"

// fourLetterWord answers a four-letter word in plain text, as ZooKeeper
// does, then the connection closes: ruok, srvr, stat and mntr for health
// checkers and monitoring, conf, cons, envi and wchs for an operator
// looking at the door. The other words ZooKeeper knows (dump, wchc, crst,
// ...) answer as ZooKeeper does for a word left out of
// 4lw.commands.whitelist: "<word> is not executed because it is not in
// the whitelist."
func (c *conn) fourLetterWord(w string) {
	s := c.s
	var b strings.Builder
	switch w {
	case "ruok":
		b.WriteString("imok")
	case "srvr", "stat", "mntr":
		s.writeStats(&b, w)
	case "conf":
		_, port, _ := net.SplitHostPort(s.Addr())
		for _, kv := range [][2]any{
			{"clientPort", port}, {"clientPortAddress", s.Addr()},
			{"minSessionTimeout", s.cfg.MinSessionTimeout.Milliseconds()},
			{"maxSessionTimeout", s.cfg.MaxSessionTimeout.Milliseconds()},
			{"maxSessions", s.cfg.MaxSessions}, {"maxWatches", s.cfg.MaxWatches},
			{"sessionGraceMs", s.cfg.Grace.Milliseconds()}, {"deleteHoldMs", s.cfg.DeleteHold.Milliseconds()},
			{"containerCheckMs", s.cfg.ContainerCheck.Milliseconds()}, {"agent", s.local},
		} {
			fmt.Fprintf(&b, "%s=%v\n", kv[0], kv[1])
		}
	case "cons":
		s.writeConns(&b)
	case "envi":
		host, _ := os.Hostname()
		dir, _ := os.Getwd()
		b.WriteString("Environment:\n")
		for _, kv := range [][2]string{
			{"zookeeper.version", Version}, {"host.name", host}, {"go.version", runtime.Version()},
			{"os.name", runtime.GOOS}, {"os.arch", runtime.GOARCH}, {"user.dir", dir},
			{"namecast.agent", s.local},
		} {
			fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
		}
	case "wchs":
		conns, paths, total := s.watchSummary()
		fmt.Fprintf(&b, "%d connections watching %d paths\nTotal watches:%d\n", conns, paths, total)
	default:
		fmt.Fprintf(&b, "%s is not executed because it is not in the whitelist.\n", w)
	}
	c.nc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	c.nc.Write([]byte(b.String()))
}

// writeStats answers srvr and stat (ZooKeeper's text) or mntr (its
// tab-separated keys).
func (s *Server) writeStats(b *strings.Builder, w string) {
	s.mu.Lock()
	sessions, conns, watches, nodes, zxid := len(s.sessions), s.conns.Len(), s.watches.n, len(s.tree.nodes), s.zxid
	ephemerals := len(s.owners)
	s.mu.Unlock()
	st := &s.stats
	minMs, maxMs, avgMs := float64(st.latMinNs.Load())/1e6, float64(st.latMaxNs.Load())/1e6, 0.0
	if n := st.latN.Load(); n > 0 {
		avgMs = float64(st.latSum.Load()) / float64(n) / 1e6
	}
	if w != "mntr" {
		fmt.Fprintf(b, "Zookeeper version: %s\n", Version)
		fmt.Fprintf(b, "Latency min/avg/max: %.3f/%.3f/%.3f\n", minMs, avgMs, maxMs)
		fmt.Fprintf(b, "Received: %d\nSent: %d\nConnections: %d\nOutstanding: 0\n", st.received.Load(), st.received.Load()+st.notifications.Load(), conns)
		fmt.Fprintf(b, "Zxid: 0x%x\nMode: standalone\nNode count: %d\n", zxid, nodes)
		return
	}
	for _, kv := range [][2]any{
		{"zk_version", Version}, {"zk_server_state", "standalone"},
		{"zk_avg_latency", fmt.Sprintf("%.3f", avgMs)}, {"zk_max_latency", fmt.Sprintf("%.3f", maxMs)},
		{"zk_min_latency", fmt.Sprintf("%.3f", minMs)}, {"zk_packets_received", st.received.Load()},
		{"zk_num_alive_connections", conns}, {"zk_outstanding_requests", 0},
		{"zk_znode_count", nodes}, {"zk_watch_count", watches}, {"zk_ephemerals_count", ephemerals},
		{"zk_global_sessions", sessions}, {"zk_approximate_data_size", 0},
	} {
		fmt.Fprintf(b, "%s\t%v\n", kv[0], kv[1])
	}
}

// writeConns answers cons: one line per client connection, in ZooKeeper's
// shape (" /ip:port[1](queued=0,...,sid=0x...,to=...)"), sorted.
func (s *Server) writeConns(b *strings.Builder) {
	all := s.conns.All()
	lines := make([]string, 0, len(all))
	s.mu.Lock()
	for _, c := range all {
		if c.sess == nil {
			lines = append(lines, fmt.Sprintf(" /%s[0](queued=0)\n", c.remote))
			continue
		}
		lines = append(lines, fmt.Sprintf(" /%s[1](queued=0,sid=0x%x,to=%d,watches=%d)\n",
			c.remote, c.sess.id, c.sess.timeout.Milliseconds(), len(c.watches)))
	}
	s.mu.Unlock()
	sort.Strings(lines)
	for _, l := range lines {
		b.WriteString(l)
	}
}

// watchSummary counts what wchs reports, as ZooKeeper counts its data
// watches (getData, exists, and addWatch's): connections with one, paths
// watched, and watches (one per connection and path it asked with).
func (s *Server) watchSummary() (conns, paths, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byConn := map[*conn]map[string]bool{}
	allPaths := map[string]bool{}
	for _, kind := range []watchKind{watchData, watchPersistent, watchRecursive} {
		for _, watchers := range s.watches.m[kind] {
			for c, cps := range watchers {
				if byConn[c] == nil {
					byConn[c] = map[string]bool{}
				}
				for _, cp := range cps {
					byConn[c][cp] = true
					allPaths[cp] = true
				}
			}
		}
	}
	for _, ps := range byConn {
		total += len(ps)
	}
	return len(byConn), len(allPaths), total
}
