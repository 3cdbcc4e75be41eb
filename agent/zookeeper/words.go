package zookeeper

import (
	"fmt"
	"strings"
	"time"
)

// Version is what srvr and mntr report as the server version.
const Version = "3.8.0-namecast"

// fourLetterWord answers a health checker's ruok, srvr, stat or mntr in
// plain text, as ZooKeeper does, then the connection closes.
func (c *conn) fourLetterWord(w string) {
	s := c.s
	s.mu.Lock()
	sessions, conns, watches, nodes, zxid := len(s.sessions), len(s.conns), s.watches.n, len(s.tree.nodes), s.zxid
	ephemerals := len(s.owners)
	s.mu.Unlock()
	st := &s.stats
	minMs, maxMs, avgMs := float64(st.latMinNs.Load())/1e6, float64(st.latMaxNs.Load())/1e6, 0.0
	if n := st.latN.Load(); n > 0 {
		avgMs = float64(st.latSum.Load()) / float64(n) / 1e6
	}
	var b strings.Builder
	switch w {
	case "ruok":
		b.WriteString("imok")
	case "srvr", "stat":
		fmt.Fprintf(&b, "Zookeeper version: %s\n", Version)
		fmt.Fprintf(&b, "Latency min/avg/max: %.3f/%.3f/%.3f\n", minMs, avgMs, maxMs)
		fmt.Fprintf(&b, "Received: %d\nSent: %d\nConnections: %d\nOutstanding: 0\n", st.received.Load(), st.received.Load()+st.notifications.Load(), conns)
		fmt.Fprintf(&b, "Zxid: 0x%x\nMode: standalone\nNode count: %d\n", zxid, nodes)
	case "mntr":
		for _, kv := range [][2]any{
			{"zk_version", Version}, {"zk_server_state", "standalone"},
			{"zk_avg_latency", fmt.Sprintf("%.3f", avgMs)}, {"zk_max_latency", fmt.Sprintf("%.3f", maxMs)},
			{"zk_min_latency", fmt.Sprintf("%.3f", minMs)}, {"zk_packets_received", st.received.Load()},
			{"zk_num_alive_connections", conns}, {"zk_outstanding_requests", 0},
			{"zk_znode_count", nodes}, {"zk_watch_count", watches}, {"zk_ephemerals_count", ephemerals},
			{"zk_global_sessions", sessions}, {"zk_approximate_data_size", 0},
		} {
			fmt.Fprintf(&b, "%s\t%v\n", kv[0], kv[1])
		}
	}
	c.nc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	c.nc.Write([]byte(b.String()))
}
