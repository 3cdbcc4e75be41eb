package agent_test

import (
	"bufio"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// zkClient speaks ZooKeeper frames by hand: enough for one session's
// creates and setData.
type zkClient struct {
	t   testing.TB
	nc  net.Conn
	br  *bufio.Reader
	xid int32
}

func dialZK(t *testing.T, addr string) *zkClient { return dialZKB(t, addr) }

func dialZKB(t testing.TB, addr string) *zkClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(5 * time.Minute))
	c := &zkClient{t: t, nc: nc, br: bufio.NewReader(nc)}
	c.send(func(e *zkwire.Encoder) { (&zkwire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}).Encode(e) })
	if _, err := zkwire.ReadPacket(c.br, zkwire.MaxPacket); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return c
}

func (c *zkClient) send(body func(*zkwire.Encoder)) {
	c.t.Helper()
	if _, err := c.nc.Write(zkwire.AppendPacket(nil, body)); err != nil {
		c.t.Fatal(err)
	}
}

// call sends one request and returns its reply's error code.
func (c *zkClient) call(op int32, rec zkwire.Record) int32 {
	c.t.Helper()
	c.xid++
	c.send(func(e *zkwire.Encoder) {
		(&zkwire.RequestHeader{Xid: c.xid, Type: op}).Encode(e)
		rec.Encode(e)
	})
	for {
		b, err := zkwire.ReadPacket(c.br, zkwire.MaxPacket)
		if err != nil {
			c.t.Fatal(err)
		}
		var h zkwire.ReplyHeader
		h.Decode(zkwire.NewDecoder(b))
		if h.Xid == c.xid {
			return h.Err
		}
	}
}

// An ephemeral znode's setData is in the data dir when its answer
// arrives: what a restart would restore holds the new data. Before, the
// session's lease was re-saved only when its deadline moved by 100 ms, so
// a setData right after the create (Dubbo 3 registers, then updates the
// revision) was rolled back cluster-wide by a kill -9 (issue 24, item 2).
func TestEphemeralSetDataIsDurable(t *testing.T) {
	dir := t.TempDir()
	c := agenttest.Start(t, 1, agenttest.WithDataDirs(dir))
	zk := dialZK(t, c.Agent(0).Addr("zookeeper"))
	acl := []zkwire.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}
	for _, p := range []string{"/services", "/services/app"} {
		if code := zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: p, ACL: acl}); code != 0 && code != zkwire.ErrNodeExists {
			t.Fatalf("create %s: %d", p, code)
		}
	}
	if code := zk.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: "/services/app/inst", Data: []byte("revision=1"), ACL: acl, Flags: zkwire.FlagEphemeral}); code != 0 {
		t.Fatalf("create: %d", code)
	}
	if code := zk.call(zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/services/app/inst", Data: []byte("revision=2"), Version: -1}); code != 0 {
		t.Fatalf("setData: %d", code)
	}
	saved, err := agent.SavedLeases(filepath.Join(dir, "agent-0"))
	if err != nil {
		t.Fatal(err)
	}
	var data []string
	for _, recs := range saved {
		for _, r := range recs {
			if r.Znode != nil && r.Znode.Path == "/services/app/inst" {
				data = append(data, string(r.Znode.Data))
			}
		}
	}
	if len(data) != 1 || data[0] != "revision=2" {
		t.Fatalf("right after setData was answered, a restart would restore %q, want [revision=2]", data)
	}
}
