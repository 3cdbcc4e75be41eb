package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// crashZK is the crash test's ZooKeeper client: one session on one agent,
// spoken frame by frame with zkwire (the main module has no other
// client), that can re-attach to its session after the agent restarts.
type crashZK struct {
	addr string
	sid  int64
	pw   []byte
	nc   net.Conn // nil while detached
	br   *bufio.Reader
	xid  int32
}

// errZKExpired is the handshake's answer for a session the agent no
// longer has.
var errZKExpired = errors.New("session expired")

// errZKNotSent: the agent was not there to ask (the dial was refused), so
// nothing was asked of it.
var errZKNotSent = errors.New("connection refused: nothing sent")

// zkSessionTimeout is the most the door grants (40 s): the session must
// outlive a restart of its agent under a loaded machine.
const zkSessionTimeout = 40 * time.Second

// attach opens a connection and a new session, or re-attaches to the one
// it had. errZKExpired: the session is gone (the client then starts a new
// one with the next attach).
func (c *crashZK) attach() error {
	if c.nc != nil {
		return nil
	}
	nc, err := net.DialTimeout("tcp", c.addr, 3*time.Second)
	if err != nil {
		return errZKNotSent
	}
	pw := c.pw
	if pw == nil {
		pw = make([]byte, 16)
	}
	// The handshake waits for the agent's first sync with its cluster.
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	_, err = nc.Write(zkwire.AppendPacket(nil, func(e *zkwire.Encoder) {
		(&zkwire.ConnectRequest{TimeOut: int32(zkSessionTimeout / time.Millisecond), SessionID: c.sid, Passwd: pw}).Encode(e)
	}))
	br := bufio.NewReader(nc)
	var resp zkwire.ConnectResponse
	if err == nil {
		var b []byte
		if b, err = zkwire.ReadPacket(br, zkwire.MaxPacket); err == nil {
			err = zkwire.Unmarshal(b, &resp)
		}
	}
	if err != nil {
		nc.Close()
		return fmt.Errorf("handshake with %s: %w", c.addr, err)
	}
	if resp.SessionID == 0 {
		nc.Close()
		c.sid, c.pw = 0, nil
		return errZKExpired
	}
	if c.sid != 0 && resp.SessionID != c.sid {
		nc.Close()
		return fmt.Errorf("re-attach to session %x answered with session %x", c.sid, resp.SessionID)
	}
	c.sid, c.pw, c.nc, c.br = resp.SessionID, resp.Passwd, nc, br
	return nil
}

// detach drops the connection (not the session).
func (c *crashZK) detach() {
	if c.nc != nil {
		c.nc.Close()
		c.nc = nil
	}
}

// close ends the session, as a client shutting down does.
func (c *crashZK) close() {
	if c.nc != nil {
		c.call(zkwire.OpCloseSession, nil)
		c.detach()
	}
}

// call sends one request and returns its reply's error code and body. An
// error means no answer came: the connection is dropped, and what the
// request did is unknown (unless errZKNotSent).
func (c *crashZK) call(op int32, rec zkwire.Record) (int32, *zkwire.Decoder, error) {
	if err := c.attach(); err != nil {
		return 0, nil, err
	}
	c.xid++
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := c.nc.Write(zkwire.AppendPacket(nil, func(e *zkwire.Encoder) {
		(&zkwire.RequestHeader{Xid: c.xid, Type: op}).Encode(e)
		if rec != nil {
			rec.Encode(e)
		}
	}))
	for err == nil {
		var b []byte
		if b, err = zkwire.ReadPacket(c.br, zkwire.MaxPacket); err != nil {
			break
		}
		d := zkwire.NewDecoder(b)
		var h zkwire.ReplyHeader
		h.Decode(d)
		if h.Xid == c.xid {
			return h.Err, d, nil
		}
	}
	c.detach()
	return 0, nil, err
}

var crashACL = []zkwire.ACL{{Perms: 31, Scheme: "world", ID: "anyone"}}

func (c *crashZK) create(path string, data []byte, flags int32) (int32, error) {
	code, _, err := c.call(zkwire.OpCreate, &zkwire.CreateRequest{Path: path, Data: data, ACL: crashACL, Flags: flags})
	return code, err
}

func (c *crashZK) setData(path string, data []byte) (int32, error) {
	code, _, err := c.call(zkwire.OpSetData, &zkwire.SetDataRequest{Path: path, Data: data, Version: -1})
	return code, err
}

func (c *crashZK) delete(path string) (int32, error) {
	code, _, err := c.call(zkwire.OpDelete, &zkwire.PathVersion{Path: path, Version: -1})
	return code, err
}

// getData reads path: its data, or present false on NONODE.
func (c *crashZK) getData(path string) (data string, present bool, err error) {
	code, d, err := c.call(zkwire.OpGetData, &zkwire.PathWatch{Path: path})
	switch {
	case err != nil:
		return "", false, err
	case code == zkwire.ErrNoNode:
		return "", false, nil
	case code != zkwire.ErrOK:
		return "", false, fmt.Errorf("getData %s: %s", path, zkwire.ErrName(code))
	}
	var r zkwire.GetDataResponse
	r.Decode(d)
	return string(r.Data), true, d.Err()
}

// ping keeps the session heard while nothing else is asked.
func (c *crashZK) ping() error {
	_, _, err := c.call(zkwire.OpExists, &zkwire.PathWatch{Path: "/"})
	return err
}
