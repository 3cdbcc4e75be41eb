package zookeeper

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// Random bodies for every opcode never crash the server or desynchronise
// the connection: each gets a reply with its xid (an error or not), and a
// ping still answers after all of them.
func TestRandomBodiesForEveryOpcode(t *testing.T) {
	s, _ := startServer(t, func(c *Config) { c.RefusalPace = time.Microsecond }) // hundreds of refusals
	r := dialRaw(t, s)
	r.handshake(false)
	rng := rand.New(rand.NewPCG(1, 2))
	ops := []int32{zkwire.OpCreate, zkwire.OpDelete, zkwire.OpExists, zkwire.OpGetData, zkwire.OpSetData,
		zkwire.OpGetACL, zkwire.OpSetACL, zkwire.OpGetChildren, zkwire.OpSync, zkwire.OpGetChildren2,
		zkwire.OpCheck, zkwire.OpMulti, zkwire.OpCreate2, zkwire.OpReconfig, zkwire.OpCheckWatches,
		zkwire.OpRemoveWatches, zkwire.OpCreateContainer, zkwire.OpCreateTTL, zkwire.OpMultiRead,
		zkwire.OpAuth, zkwire.OpSetWatches, zkwire.OpSASL, zkwire.OpSetWatches2, zkwire.OpAddWatch, 103, 104, 107, -3}
	xid := int32(0)
	for round := 0; round < 40; round++ {
		for _, op := range ops {
			xid++
			body := make([]byte, rng.IntN(64))
			for i := range body {
				body[i] = byte(rng.IntN(256))
			}
			if rng.IntN(3) == 0 && len(body) >= 4 {
				// A plausible path length with junk after it.
				body[0], body[1], body[2], body[3] = 0, 0, 0, byte(rng.IntN(len(body)))
			}
			h, _, _ := r.call(xid, op, rawBody(body))
			if h.Xid != xid {
				t.Fatalf("op %d: reply xid %d, want %d", op, h.Xid, xid)
			}
		}
	}
	if h, _, _ := r.call(zkwire.XidPing, zkwire.OpPing, nil); h.Err != 0 {
		t.Fatalf("ping after random input: %+v", h)
	}
}

// rawBody is a record that encodes as the given bytes.
type rawBody []byte

func (b rawBody) Encode(e *zkwire.Encoder) { e.B = append(e.B, b...) }
func (b rawBody) Decode(*zkwire.Decoder)   {}

// kazoo sends auth at xid -4 and empty strings as length -1; both work.
func TestKazooQuirks(t *testing.T) {
	s, _ := startServer(t)
	r := dialRaw(t, s)
	r.handshake(true)
	if h, d, _ := r.call(zkwire.XidAuth, zkwire.OpAuth, &zkwire.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}); h.Err != 0 || d.Remaining() != 0 {
		t.Fatalf("auth: %+v, %d body bytes", h, d.Remaining())
	}
	// create("/k", data=b"", acl=[{31, "world", "anyone"}]) with the data
	// written as -1 and the path as usual.
	body := zkwire.Encoder{}
	body.String("/k")
	body.Int(-1)
	body.Int(1)
	body.Int(31)
	body.String("world")
	body.String("anyone")
	body.Int(0)
	if h, _, _ := r.call(1, zkwire.OpCreate, rawBody(body.B)); h.Err != 0 {
		t.Fatalf("create with a null data buffer: %d", h.Err)
	}
	_, d, _ := r.call(2, zkwire.OpGetData, &zkwire.PathWatch{Path: "/k"})
	var gd zkwire.GetDataResponse
	gd.Decode(d)
	if d.Err() != nil || gd.Data != nil {
		t.Fatalf("null data came back as %q (%v)", gd.Data, d.Err())
	}
}
