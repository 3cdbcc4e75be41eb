package rocketmq

import (
	"strconv"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/routes"
)

// wipeWritePerm is WIPE_WRITE_PERM_OF_BROKER (205): the graceful drain of
// §5.6. Producers stop choosing the broker at their next route poll.
func (s *Server) wipeWritePerm(_ *conn, req *remoting.Command, rep *reply) {
	s.writePerm(req, rep, true, "wipeTopicCount")
}

// addWritePerm is ADD_WRITE_PERM_OF_BROKER (327): perm becomes READ|WRITE.
func (s *Server) addWritePerm(_ *conn, req *remoting.Command, rep *reply) {
	s.writePerm(req, rep, false, "addTopicCount")
}

// writePerm rewrites the broker's queue data held here at once and sends a
// command to every other agent its group registered on, so that mqadmin may
// address any agent. The count is the topics the broker has queue data for
// cluster-wide, which is what Java's single table would count.
func (s *Server) writePerm(req *remoting.Command, rep *reply, wipe bool, countKey string) {
	if !requireExt(req, rep, "brokerName") {
		return
	}
	name := req.ExtFields["brokerName"]
	local := s.changeWritePermLocal(name, wipe)
	table := s.reg.Table()
	param := permAdd
	if wipe {
		param = permWipe
	}
	s.sendCommands(table.BrokerHolders(name), opPerm, name, param)
	rep.SetExt(countKey, strconv.Itoa(max(local, len(table.Queues(name)))))
}

// changeWritePermLocal clears WRITE from (wipe), or sets READ|WRITE on,
// every queue of the broker this agent holds. Until the broker's DataVersion
// changes or it registers anew, its re-registrations leave this in force.
func (s *Server) changeWritePermLocal(name string, wipe bool) int {
	bt := &s.brokers
	bt.mu.Lock()
	defer bt.mu.Unlock()
	held := s.reg.LocalRecords(routes.QueuePrefix(name))
	puts := make([]routes.Record, 0, len(held))
	for _, r := range held {
		q := *r.Queue
		if wipe {
			q.Perm &^= remoting.PermWrite
		} else {
			q.Perm = remoting.PermRead | remoting.PermWrite
		}
		puts = append(puts, routes.Record{Queue: &q})
	}
	s.reg.Apply(puts, nil)
	return len(held)
}
