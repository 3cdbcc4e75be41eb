package zookeeper_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"net"
	"sort"
	"sync"
	"testing"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// bareServer is the read figures' floor: it speaks the same framing on
// loopback (handshake, then one reply per request, in order, echoing the
// xid) but keeps no registry: every exists, getData and getChildren2 is
// answered with a canned reply of the size the agent gives for
// figReads' requests. One goroutine per connection reads with a buffered
// reader and writes its replies through a buffered writer flushed only when
// no further request is already buffered. Whatever the agent costs beyond
// this is the door's (registry, watches, sessions, metrics); the rest is
// the client, the kernel and the machine.
type bareServer struct {
	ln     net.Listener
	canned map[int32][]byte // opcode -> reply body after the header
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

// startBare serves canned replies shaped like figReads': a listing of
// 1,000 provider names with its Stat, a Stat, and "10.0.0.1" with a Stat.
func startBare(t *testing.T) *bareServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 1000)
	for i := range names {
		names[i] = providerName(i)
	}
	sort.Strings(names)
	st := zkwire.Stat{Czxid: 1, Mzxid: 1, Pzxid: 1, Ctime: 1, Mtime: 1, NumChildren: 1000}
	enc := func(r zkwire.Record) []byte {
		e := zkwire.Encoder{}
		r.Encode(&e)
		return e.B
	}
	b := &bareServer{ln: ln, conns: map[net.Conn]struct{}{}, canned: map[int32][]byte{
		zkwire.OpExists:       enc(&st),
		zkwire.OpGetData:      enc(&zkwire.GetDataResponse{Data: []byte("10.0.0.1"), Stat: st}),
		zkwire.OpGetChildren2: enc(&zkwire.ChildrenResponse{Children: names, Stat: st, WithStat: true}),
		zkwire.OpPing:         nil,
	}}
	b.wg.Add(1)
	go b.accept()
	t.Cleanup(b.close)
	return b
}

func (b *bareServer) Addr() string { return b.ln.Addr().String() }

func (b *bareServer) close() {
	b.ln.Close()
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *bareServer) accept() {
	defer b.wg.Done()
	for {
		nc, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.mu.Lock()
		b.conns[nc] = struct{}{}
		b.mu.Unlock()
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.serve(nc)
			nc.Close()
			b.mu.Lock()
			delete(b.conns, nc)
			b.mu.Unlock()
		}()
	}
}

func (b *bareServer) serve(nc net.Conn) error {
	br, bw := bufio.NewReaderSize(nc, 16<<10), bufio.NewWriterSize(nc, 16<<10)
	body, err := zkwire.ReadPacket(br, zkwire.MaxPacket)
	if err != nil {
		return err
	}
	var req zkwire.ConnectRequest
	if err := zkwire.Unmarshal(body, &req); err != nil {
		return err
	}
	resp := zkwire.ConnectResponse{TimeOut: req.TimeOut, SessionID: 1, Passwd: make([]byte, 16), HasReadOnly: req.HasReadOnly}
	if _, err := bw.Write(zkwire.AppendPacket(nil, resp.Encode)); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	var frame []byte
	var hdr [20]byte
	for {
		n, err := zkwire.ReadLength(br)
		if err == nil {
			frame, err = zkwire.ReadBody(br, n, zkwire.MaxPacket, frame)
		}
		if err != nil {
			return err
		}
		if len(frame) < 8 {
			return errors.New("bare: short request")
		}
		xid, op := int32(binary.BigEndian.Uint32(frame)), int32(binary.BigEndian.Uint32(frame[4:]))
		canned, ok := b.canned[op]
		code := int32(0)
		if !ok {
			canned, code = nil, zkwire.ErrUnimplemented
		}
		binary.BigEndian.PutUint32(hdr[0:], uint32(16+len(canned)))
		binary.BigEndian.PutUint32(hdr[4:], uint32(xid))
		binary.BigEndian.PutUint64(hdr[8:], 1)
		binary.BigEndian.PutUint32(hdr[16:], uint32(code))
		bw.Write(hdr[:])
		if _, err := bw.Write(canned); err != nil {
			return err
		}
		if op == zkwire.OpCloseSession {
			return bw.Flush()
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}
