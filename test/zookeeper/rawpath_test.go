package zookeeper_test

import (
	"encoding/binary"
	"fmt"
	"net"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// rawPathCodes opens a session by hand and sends each request of ops with
// a path go-zookeeper would refuse to send (it validates paths client
// side), returning the error code of each reply, or what went wrong.
func rawPathCodes(addr string, ops []rawOp) []string {
	out := make([]string, len(ops))
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return fill(out, "dial: "+err.Error())
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(zkwire.AppendPacket(nil, (&zkwire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}).Encode)); err != nil {
		return fill(out, "write: "+err.Error())
	}
	if _, err := readFrame(c); err != nil {
		return fill(out, "connect reply: "+err.Error())
	}
	for i, op := range ops {
		xid := int32(i + 1)
		if _, err := c.Write(zkwire.AppendPacket(nil, func(e *zkwire.Encoder) {
			(&zkwire.RequestHeader{Xid: xid, Type: op.code}).Encode(e)
			op.body.Encode(e)
		})); err != nil {
			return fill(out[i:], "write: "+err.Error())
		}
		for {
			f, err := readFrame(c)
			if err != nil {
				fill(out[i:], "connection closed")
				return out
			}
			if len(f) < 16 || int32(binary.BigEndian.Uint32(f)) != xid {
				continue // a notification
			}
			out[i] = codeName(int32(binary.BigEndian.Uint32(f[12:])))
			break
		}
	}
	return out
}

type rawOp struct {
	code int32
	body zkwire.Record
}

func fill(out []string, s string) []string {
	for i := range out {
		out[i] = s
	}
	return out
}

func codeName(code int32) string {
	switch code {
	case zkwire.ErrOK:
		return "OK"
	case zkwire.ErrNoNode:
		return "NONODE"
	case zkwire.ErrBadArguments:
		return "BADARGUMENTS"
	case zkwire.ErrMarshalling:
		return "MARSHALLINGERROR"
	case zkwire.ErrNodeExists:
		return "NODEEXISTS"
	}
	return fmt.Sprintf("error %d", code)
}
