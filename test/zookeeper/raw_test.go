package zookeeper_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// rawUnknownOpcode opens a session by hand (a 44-byte ConnectRequest, as
// go-zookeeper sends), sends an opcode no client uses, then a ping, and
// says what came back: the error code, then whether the connection closed
// or stayed open (and answered the ping).
func rawUnknownOpcode(addr string) string {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	connect := make([]byte, 0, 48)
	connect = binary.BigEndian.AppendUint32(connect, 44)
	connect = binary.BigEndian.AppendUint32(connect, 0)     // protocolVersion
	connect = binary.BigEndian.AppendUint64(connect, 0)     // lastZxidSeen
	connect = binary.BigEndian.AppendUint32(connect, 10000) // timeOut
	connect = binary.BigEndian.AppendUint64(connect, 0)     // sessionId
	connect = binary.BigEndian.AppendUint32(connect, 16)    // passwd
	connect = append(connect, make([]byte, 16)...)
	if _, err := c.Write(connect); err != nil {
		return "write: " + err.Error()
	}
	if _, err := readFrame(c); err != nil {
		return "connect reply: " + err.Error()
	}
	req := func(xid, op int32) []byte {
		b := binary.BigEndian.AppendUint32(nil, 8)
		b = binary.BigEndian.AppendUint32(b, uint32(xid))
		return binary.BigEndian.AppendUint32(b, uint32(op))
	}
	if _, err := c.Write(append(req(1, 9999), req(-2, 11)...)); err != nil {
		return "write: " + err.Error()
	}
	f, err := readFrame(c)
	if err != nil || len(f) < 16 {
		return fmt.Sprintf("unknown opcode: no reply (%v)", err)
	}
	out := fmt.Sprintf("xid=%d err=%d", int32(binary.BigEndian.Uint32(f)), int32(binary.BigEndian.Uint32(f[12:])))
	// ZooKeeper closes the connection after the reply, sometimes after
	// answering the ping already queued; only "it closed" is certain. Read
	// until it closes, or 2 s pass with it open.
	pinged := false
	c.SetDeadline(time.Now().Add(2 * time.Second))
	for {
		f, err := readFrame(c)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return out + fmt.Sprintf(", then the connection stayed open (ping answered: %t)", pinged)
			}
			return out + ", then the connection closed"
		}
		if len(f) >= 4 && int32(binary.BigEndian.Uint32(f)) == -2 {
			pinged = true
		}
	}
}

func readFrame(c net.Conn) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return nil, err
	}
	l := binary.BigEndian.Uint32(n[:])
	if l > 1<<20 {
		return nil, fmt.Errorf("frame of %d bytes", l)
	}
	b := make([]byte, l)
	_, err := io.ReadFull(c, b)
	return b, err
}
