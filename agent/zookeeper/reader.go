package zookeeper

import (
	"encoding/binary"
	"net"
	"sync"
)

// Read buffers: an idle connection (most of them: a Dubbo app's session
// mostly waits for notifications) blocks on a small buffer of its own; a
// read that fills it means requests are pipelined, and the connection
// borrows a big buffer from a pool until a read leaves it part empty and
// everything read is consumed. 1,000 idle sessions then hold 512 KB of
// read buffers instead of 4 MB.
const (
	smallRead = 512
	bigRead   = 16 << 10
)

var bigReads = sync.Pool{New: func() any { b := make([]byte, bigRead); return &b }}

// reader is a buffered reader over a connection; its reader goroutine
// only.
type reader struct {
	nc    net.Conn
	small [smallRead]byte
	big   *[]byte // borrowed while busy, else nil
	buf   []byte  // small[:] or *big
	r, w  int     // buf[r:w] is read and not consumed
	full  bool    // the last read filled buf
}

func (rd *reader) init(nc net.Conn) {
	rd.nc = nc
	rd.buf = rd.small[:]
}

// Buffered is how many bytes are read and not consumed.
func (rd *reader) Buffered() int { return rd.w - rd.r }

// frameBuffered reports whether a whole frame is buffered.
func (rd *reader) frameBuffered() bool {
	n := rd.w - rd.r
	return n >= 4 && n-4 >= int(binary.BigEndian.Uint32(rd.buf[rd.r:]))
}

// Read implements io.Reader: buffered bytes first; a read as large as the
// buffer goes straight into p.
func (rd *reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if rd.r == rd.w {
		if len(p) >= len(rd.buf) {
			return rd.nc.Read(p)
		}
		if err := rd.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, rd.buf[rd.r:rd.w])
	rd.r += n
	return n, nil
}

// fill reads once from the connection into the free end of buf.
func (rd *reader) fill() error {
	if rd.r == rd.w {
		rd.r, rd.w = 0, 0
		if rd.big != nil && !rd.full {
			rd.release()
		}
	} else if rd.r > 0 {
		rd.w = copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.r = 0
	}
	if rd.full && rd.big == nil {
		rd.big = bigReads.Get().(*[]byte)
		copy(*rd.big, rd.buf[:rd.w])
		rd.buf = *rd.big
	}
	n, err := rd.nc.Read(rd.buf[rd.w:])
	rd.w += n
	rd.full = rd.w == len(rd.buf)
	if n > 0 {
		return nil
	}
	return err
}

// release gives the big buffer back; nothing may be buffered in it.
func (rd *reader) release() {
	if rd.big != nil {
		bigReads.Put(rd.big)
		rd.big, rd.buf = nil, rd.small[:]
	}
}
