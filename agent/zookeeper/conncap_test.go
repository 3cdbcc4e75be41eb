package zookeeper

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/internal/testutil"
)

// Connections from one client IP are capped as ZooKeeper's maxClientCnxns
// caps them: past MaxClientConns a new connection is closed before its
// handshake, the ones already open keep working, and closing one makes
// room. Before, the door took 3,000 handshakes in 0.6 s from one client.
func TestConnectionsPerClientIPAreCapped(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.MaxClientConns = 3 })
	var open []*raw
	for range 3 {
		r := dialRaw(t, s)
		r.handshake(false)
		open = append(open, r)
	}
	tryHandshake := func() error {
		nc, err := net.Dial("tcp", s.Addr())
		if err != nil {
			return err
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		pkt := zkwire.AppendPacket(nil, func(e *zkwire.Encoder) {
			(&zkwire.ConnectRequest{TimeOut: 5000, Passwd: make([]byte, 16)}).Encode(e)
		})
		if _, err := nc.Write(pkt); err != nil {
			return err
		}
		_, err = zkwire.ReadPacket(bufio.NewReader(nc), zkwire.MaxPacket)
		return err
	}
	if err := tryHandshake(); err == nil {
		t.Fatal("a 4th connection from one IP was answered")
	}
	if h, _, _ := open[0].call(1, zkwire.OpExists, &zkwire.PathWatch{Path: "/"}); h.Err != 0 {
		t.Fatalf("an open connection stopped working: err %d", h.Err)
	}
	open[1].nc.Close()
	testutil.Eventually(t, 10*time.Second, tryHandshake)
}
