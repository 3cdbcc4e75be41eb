package gossip

import (
	"bytes"
	"compress/lzw"
	"net"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/memberlist"
)

// memberlist's compression is off outside wan (config.go: it compresses
// every packet, probes included, and that fed the overload spiral), but
// its push/pull, every member's address, meta and incarnation, is large
// and compresses ~4x: sent plain it made idle traffic at 2,000 members
// 3.25x Serf's. So the transport compresses that one message itself, in
// memberlist's own compressMsg framing, which every memberlist reads
// whatever its EnableCompression says (readStream): nothing to negotiate,
// and older agents read it too. Messages memberlist has encrypted are left
// alone (they do not compress), as are the snapshots namecast deflates.

const (
	mlPushPullMsg = 6 // memberlist's pushPullMsg
	mlCompressMsg = 9 // compressMsg
	mlLZWAlgo     = 0 // lzwAlgo, compressMsg's only algorithm
	mlLZWLitWidth = 8 // lzwLitWidth

	// compressPushPullFrom is the smallest push/pull compressed: a few
	// members' state gains nothing once LZW's codes and framing are paid.
	compressPushPullFrom = 512
)

// lzwMsg is memberlist's compress struct (net.go), encoded as memberlist
// encodes it: a msgpack map of Algo and Buf after the compressMsg byte.
type lzwMsg struct {
	Algo uint8
	Buf  []byte
}

// shrinkPushPull returns msg, one whole memberlist stream message,
// compressed when it is a push/pull that gains by it, else msg itself.
func shrinkPushPull(msg []byte) []byte {
	if len(msg) < compressPushPullFrom || msg[0] != mlPushPullMsg {
		return msg
	}
	var lz bytes.Buffer
	w := lzw.NewWriter(&lz, lzw.LSB, mlLZWLitWidth)
	if _, err := w.Write(msg); err != nil {
		return msg
	}
	if err := w.Close(); err != nil {
		return msg
	}
	out := bytes.NewBuffer(make([]byte, 0, lz.Len()+16))
	out.WriteByte(mlCompressMsg)
	if err := codec.NewEncoder(out, &codec.MsgpackHandle{}).Encode(&lzwMsg{Algo: mlLZWAlgo, Buf: lz.Bytes()}); err != nil {
		return msg
	}
	if out.Len() >= len(msg) {
		return msg
	}
	return out.Bytes()
}

// writeMsg writes b, one whole memberlist stream message (memberlist
// writes each in a single Write: rawSendMsgStream, the label header), to
// conn through shrinkPushPull, and reports all of b written when all of
// what stood for it was.
func (t *limitedTransport) writeMsg(conn net.Conn, b []byte) (int, error) {
	if t.plainPushPull {
		return conn.Write(b)
	}
	s := shrinkPushPull(b)
	if len(s) == len(b) {
		return conn.Write(b)
	}
	if _, err := conn.Write(s); err != nil {
		return 0, err
	}
	return len(b), nil
}

// shrinkConn is an outgoing gossip stream whose writes go through
// writeMsg; incoming ones are limitedConns, which do the same.
type shrinkConn struct {
	net.Conn
	t *limitedTransport
}

func (c shrinkConn) Write(b []byte) (int, error) { return c.t.writeMsg(c.Conn, b) }

func (t *limitedTransport) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	conn, err := t.NodeAwareTransport.DialAddressTimeout(a, timeout)
	if err != nil {
		return nil, err
	}
	return shrinkConn{conn, t}, nil
}

func (t *limitedTransport) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}
