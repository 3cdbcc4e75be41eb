package rocketmq

import (
	"sync"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

// liveKey identifies a broker's live entry as Java 5.x does (§5.1): one
// address may serve one broker per cluster.
type liveKey struct{ cluster, addr string }

// liveBroker is what this server knows of a broker registered here beyond
// its records: what makes it expire and what gates its topic config.
type liveBroker struct {
	cluster, name string
	id            int64
	addr          string
	actingMaster  bool // the registration's enableActingMaster
	version       remoting.DataVersion
	last          time.Time // last registration or heartbeat
	timeout       time.Duration
	conn          *conn // the connection it registered over
}

// brokerTable is the live table. Its mutex also serialises every
// read-modify-write of this agent's broker and queue records, so that
// registrations, unregistrations and admin writes never interleave.
type brokerTable struct {
	mu   sync.Mutex
	live map[liveKey]*liveBroker
}

func (bt *brokerTable) len() int {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	return len(bt.live)
}

// touch refreshes a broker's heartbeat (REGISTER_BROKER does it itself,
// QUERY_DATA_VERSION and BROKER_HEARTBEAT call this); false if unknown.
func (s *Server) touch(cluster, addr string) bool {
	bt := &s.brokers
	bt.mu.Lock()
	defer bt.mu.Unlock()
	lb := bt.live[liveKey{cluster, addr}]
	if lb != nil {
		lb.last = s.now()
		s.refreshLocked(lb)
	}
	return lb != nil
}

// expireBrokers unregisters brokers silent past their timeout and closes
// their connections, as Java's scanNotActiveBroker does (§5.4). Closing
// drops any other broker registered over the same connection too. Nobody
// can be refused an expiry: the records go even when the data dir cannot
// save the removal (lease.Holder.Forget), and a restart does not restore
// a lease past its deadline anyway.
func (s *Server) expireBrokers() {
	now := s.now()
	var stale []*conn
	var savings []lease.Saving
	bt := &s.brokers
	bt.mu.Lock()
	for _, lb := range bt.live {
		if now.Sub(lb.last) > lb.timeout {
			s.log.Warn("broker expired: no registration or heartbeat in time", "cluster", lb.cluster,
				"broker", lb.name, "id", lb.id, "addr", lb.addr, "timeout", lb.timeout)
			_, sv, _ := s.unregisterLocked(lb.cluster, lb.name, lb.addr, false)
			stale = append(stale, lb.conn)
			savings = append(savings, sv)
		}
	}
	bt.mu.Unlock()
	for _, sv := range savings {
		if err := sv.Wait(); err != nil {
			s.log.Warn("an expired broker's withdrawal is not on disk yet", "err", err)
		}
	}
	for _, c := range stale {
		if c != nil {
			c.nc.Close()
		}
	}
}

// connClosed unregisters the brokers whose live entry uses c. A broker that
// re-registered over a newer connection has moved its entry there, so a
// late close of its old connection takes nothing away (cf. issue #11043).
//
// A close is the broker letting go, and cannot be refused: its records go
// even when the data dir cannot save the removal, which is then saved once
// the disk takes writes (lease.Holder.Forget). Keeping them instead would
// serve a broker that is gone for as long as the disk is full, past its
// timeout; forgetting them only risks what any restart risks, a lease
// restored until its deadline (the last heartbeat plus the timeout),
// unless the broker comes back first.
func (s *Server) connClosed(c *conn) {
	bt := &s.brokers
	bt.mu.Lock()
	var savings []lease.Saving
	for _, lb := range bt.live {
		if lb.conn == c {
			s.log.Info("broker connection closed; unregistering", "cluster", lb.cluster, "broker", lb.name, "id", lb.id, "addr", lb.addr)
			_, sv, _ := s.unregisterLocked(lb.cluster, lb.name, lb.addr, false)
			savings = append(savings, sv)
		}
	}
	bt.mu.Unlock()
	for _, sv := range savings {
		if err := sv.Wait(); err != nil {
			s.log.Warn("a closed broker's withdrawal is not on disk yet", "err", err)
		}
	}
}
