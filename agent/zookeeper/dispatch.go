package zookeeper

import (
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// handle answers one request frame; done is true after closeSession. Every
// reply is queued in request order: handlers run one at a time on the
// connection's goroutine.
func (s *Server) handle(c *conn, body []byte) (done bool) {
	start := time.Now()
	d := zkwire.NewDecoder(body)
	var h zkwire.RequestHeader
	h.Decode(d)
	if d.Err() != nil {
		s.mu.Lock()
		c.reply(h.Xid, zkwire.ErrMarshalling, nil)
		s.mu.Unlock()
		s.stats.count(h.Type, zkwire.ErrMarshalling, start)
		return false
	}
	code := s.dispatch(c, h, d)
	s.stats.count(h.Type, code, start)
	s.touch(c)
	return h.Type == zkwire.OpCloseSession && code == zkwire.ErrOK
}

// decodeOrReply decodes r; on failure it answers MARSHALLINGERROR.
func (s *Server) decodeOrReply(c *conn, xid int32, d *zkwire.Decoder, r zkwire.Record) bool {
	r.Decode(d)
	if d.Err() == nil {
		return true
	}
	s.log.Info("malformed request record", "remote", c.remote, "err", d.Err())
	s.mu.Lock()
	c.reply(xid, zkwire.ErrMarshalling, nil)
	s.mu.Unlock()
	return false
}

func (s *Server) dispatch(c *conn, h zkwire.RequestHeader, d *zkwire.Decoder) int32 {
	simple := func(code int32, body zkwire.Record) int32 {
		s.mu.Lock()
		c.reply(h.Xid, code, body)
		s.mu.Unlock()
		return code
	}
	switch h.Type {
	case zkwire.OpPing, zkwire.OpAuth:
		// Auth of any scheme is accepted: ACLs are not enforced (doc.go).
		return simple(zkwire.ErrOK, nil)
	case zkwire.OpCloseSession:
		s.mu.Lock()
		ss := c.sess
		s.mu.Unlock()
		var sv lease.Saving
		if ss != nil {
			var err error
			if sv, err = s.endSession(ss, "closeSession", false); err != nil {
				// Not acknowledged: the session, its connection and its
				// znodes stay as they were (the client may close again).
				s.log.Error("closeSession refused: the session's end could not be saved to the data dir", "session", hexID(ss.id), "remote", c.remote, "err", err)
				return simple(zkwire.ErrSystem, nil)
			}
		}
		code := s.answer(c, h.Xid, zkwire.ErrOK, nil, []lease.Saving{sv})
		c.finish()
		return code
	case zkwire.OpCreate, zkwire.OpCreate2, zkwire.OpCreateContainer:
		var r zkwire.CreateRequest
		if !s.decodeOrReply(c, h.Xid, d, &r) {
			return zkwire.ErrMarshalling
		}
		return s.create(c, h, &r)
	case zkwire.OpDelete:
		var r zkwire.PathVersion
		if !s.decodeOrReply(c, h.Xid, d, &r) {
			return zkwire.ErrMarshalling
		}
		return s.delete(c, h.Xid, &r)
	case zkwire.OpMulti:
		var r zkwire.MultiRequest
		if !s.decodeOrReply(c, h.Xid, d, &r) {
			return zkwire.ErrMarshalling
		}
		return s.multi(c, h.Xid, &r)
	case zkwire.OpSetData:
		var r zkwire.SetDataRequest
		if !s.decodeOrReply(c, h.Xid, d, &r) {
			return zkwire.ErrMarshalling
		}
		return s.setData(c, h.Xid, &r)
	case zkwire.OpExists, zkwire.OpGetData, zkwire.OpGetChildren, zkwire.OpGetChildren2:
		var r zkwire.PathWatch
		if !s.decodeOrReply(c, h.Xid, d, &r) {
			return zkwire.ErrMarshalling
		}
		return s.read(c, h, &r)
	case zkwire.OpSync:
		var r zkwire.PathOnly
		if !s.decodeOrReply(c, h.Xid, d, &r) {
			return zkwire.ErrMarshalling
		}
		if !validPath(r.Path) {
			return simple(zkwire.ErrBadArguments, nil)
		}
		return simple(zkwire.ErrOK, &r)
	case zkwire.OpSetWatches, zkwire.OpSetWatches2:
		r := zkwire.SetWatches{V2: h.Type == zkwire.OpSetWatches2}
		if !s.decodeOrReply(c, h.Xid, d, &r) {
			return zkwire.ErrMarshalling
		}
		return s.setWatches(c, h.Xid, &r)
	case zkwire.OpAddWatch, zkwire.OpCheckWatches, zkwire.OpRemoveWatches:
		var r zkwire.PathMode
		if !s.decodeOrReply(c, h.Xid, d, &r) {
			return zkwire.ErrMarshalling
		}
		return s.watchOp(c, h, &r)
	}
	s.mu.Lock()
	s.refuse(c, "operation "+zkwire.OpName(h.Type), "namecast does not serve it (reconfig, ACL reads and writes, SASL and the like; doc.go lists them)", "")
	s.mu.Unlock()
	s.pace(c)
	return simple(zkwire.ErrUnimplemented, nil)
}
