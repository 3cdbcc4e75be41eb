package zkwire

// ConnectRequest is the first frame of a connection. HasReadOnly tells
// whether the trailing readOnly byte was present (Java since 3.4 and kazoo
// send it, go-zookeeper does not); the reply carries it iff the request did.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

func (r *ConnectRequest) Decode(d *Decoder) {
	r.ProtocolVersion = d.Int()
	r.LastZxidSeen = d.Long()
	r.TimeOut = d.Int()
	r.SessionID = d.Long()
	r.Passwd = d.Buffer()
	if d.Err() == nil && d.Remaining() > 0 {
		r.HasReadOnly = true
		r.ReadOnly = d.Bool()
	}
}

func (r *ConnectRequest) Encode(e *Encoder) {
	e.Int(r.ProtocolVersion)
	e.Long(r.LastZxidSeen)
	e.Int(r.TimeOut)
	e.Long(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

// ConnectResponse answers a ConnectRequest. TimeOut 0 and SessionID 0 is the
// "expired" form.
type ConnectResponse struct {
	ProtocolVersion int32
	TimeOut         int32
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
	HasReadOnly     bool
}

func (r *ConnectResponse) Decode(d *Decoder) {
	r.ProtocolVersion = d.Int()
	r.TimeOut = d.Int()
	r.SessionID = d.Long()
	r.Passwd = d.Buffer()
	if d.Err() == nil && d.Remaining() > 0 {
		r.HasReadOnly = true
		r.ReadOnly = d.Bool()
	}
}

func (r *ConnectResponse) Encode(e *Encoder) {
	e.Int(r.ProtocolVersion)
	e.Int(r.TimeOut)
	e.Long(r.SessionID)
	e.Buffer(r.Passwd)
	if r.HasReadOnly {
		e.Bool(r.ReadOnly)
	}
}

// RequestHeader starts every request after the handshake.
type RequestHeader struct{ Xid, Type int32 }

func (h *RequestHeader) Decode(d *Decoder) { h.Xid, h.Type = d.Int(), d.Int() }
func (h *RequestHeader) Encode(e *Encoder) { e.Int(h.Xid); e.Int(h.Type) }

// ReplyHeader starts every reply and notification.
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  int32
}

func (h *ReplyHeader) Decode(d *Decoder) { h.Xid, h.Zxid, h.Err = d.Int(), d.Long(), d.Int() }
func (h *ReplyHeader) Encode(e *Encoder) { e.Int(h.Xid); e.Long(h.Zxid); e.Int(h.Err) }

// Stat is a znode's metadata, 68 bytes on the wire.
type Stat struct {
	Czxid, Mzxid            int64
	Ctime, Mtime            int64
	Version, Cversion       int32
	Aversion                int32
	EphemeralOwner          int64
	DataLength, NumChildren int32
	Pzxid                   int64
}

func (s *Stat) Decode(d *Decoder) {
	s.Czxid, s.Mzxid, s.Ctime, s.Mtime = d.Long(), d.Long(), d.Long(), d.Long()
	s.Version, s.Cversion, s.Aversion = d.Int(), d.Int(), d.Int()
	s.EphemeralOwner = d.Long()
	s.DataLength, s.NumChildren = d.Int(), d.Int()
	s.Pzxid = d.Long()
}

func (s *Stat) Encode(e *Encoder) {
	e.Long(s.Czxid)
	e.Long(s.Mzxid)
	e.Long(s.Ctime)
	e.Long(s.Mtime)
	e.Int(s.Version)
	e.Int(s.Cversion)
	e.Int(s.Aversion)
	e.Long(s.EphemeralOwner)
	e.Int(s.DataLength)
	e.Int(s.NumChildren)
	e.Long(s.Pzxid)
}

// ACL is one access control entry; stored by clients, never enforced here.
type ACL struct {
	Perms      int32
	Scheme, ID string
}

// CreateRequest is the body of create, create2 and createContainer.
type CreateRequest struct {
	Path  string
	Data  []byte
	ACL   []ACL
	Flags int32
}

func (r *CreateRequest) Decode(d *Decoder) {
	r.Path = d.String()
	r.Data = d.Buffer()
	n := d.Int()
	// Each ACL takes at least 12 bytes (perms and two string lengths).
	if n > 0 && int(n) <= d.Remaining()/12 {
		r.ACL = make([]ACL, 0, n)
		for i := int32(0); i < n && d.Err() == nil; i++ {
			r.ACL = append(r.ACL, ACL{Perms: d.Int(), Scheme: d.String(), ID: d.String()})
		}
	} else if n > 0 || n < -1 {
		d.take(-1) // too many for what remains: the record is malformed
	}
	r.Flags = d.Int()
}

func (r *CreateRequest) Encode(e *Encoder) {
	e.String(r.Path)
	e.Buffer(r.Data)
	e.Int(int32(len(r.ACL)))
	for _, a := range r.ACL {
		e.Int(a.Perms)
		e.String(a.Scheme)
		e.String(a.ID)
	}
	e.Int(r.Flags)
}

// PathWatch is the body of exists, getData, getChildren and getChildren2.
type PathWatch struct {
	Path  string
	Watch bool
}

func (r *PathWatch) Decode(d *Decoder) { r.Path, r.Watch = d.String(), d.Bool() }
func (r *PathWatch) Encode(e *Encoder) { e.String(r.Path); e.Bool(r.Watch) }

// PathVersion is the body of delete (and check).
type PathVersion struct {
	Path    string
	Version int32
}

func (r *PathVersion) Decode(d *Decoder) { r.Path, r.Version = d.String(), d.Int() }
func (r *PathVersion) Encode(e *Encoder) { e.String(r.Path); e.Int(r.Version) }

// SetDataRequest is the body of setData.
type SetDataRequest struct {
	Path    string
	Data    []byte
	Version int32
}

func (r *SetDataRequest) Decode(d *Decoder) {
	r.Path, r.Data, r.Version = d.String(), d.Buffer(), d.Int()
}
func (r *SetDataRequest) Encode(e *Encoder) { e.String(r.Path); e.Buffer(r.Data); e.Int(r.Version) }

// PathMode is the body of addWatch (mode), checkWatches and removeWatches
// (watcher type).
type PathMode struct {
	Path string
	Mode int32
}

func (r *PathMode) Decode(d *Decoder) { r.Path, r.Mode = d.String(), d.Int() }
func (r *PathMode) Encode(e *Encoder) { e.String(r.Path); e.Int(r.Mode) }

// PathOnly is the body of sync and getACL, and of the responses carrying
// just a path (create, sync).
type PathOnly struct{ Path string }

func (r *PathOnly) Decode(d *Decoder) { r.Path = d.String() }
func (r *PathOnly) Encode(e *Encoder) { e.String(r.Path) }

// SetWatches is the body of setWatches (101) and, with V2, setWatches2
// (105), which adds the persistent and recursive lists.
type SetWatches struct {
	RelativeZxid          int64
	Data, Exist, Child    []string
	Persistent, Recursive []string
	V2                    bool
}

func (r *SetWatches) Decode(d *Decoder) {
	r.RelativeZxid = d.Long()
	r.Data, r.Exist, r.Child = d.Strings(), d.Strings(), d.Strings()
	if r.V2 {
		r.Persistent, r.Recursive = d.Strings(), d.Strings()
	}
}

func (r *SetWatches) Encode(e *Encoder) {
	e.Long(r.RelativeZxid)
	e.Strings(r.Data)
	e.Strings(r.Exist)
	e.Strings(r.Child)
	if r.V2 {
		e.Strings(r.Persistent)
		e.Strings(r.Recursive)
	}
}

// AuthPacket is the body of auth; accepted and not enforced.
type AuthPacket struct {
	Type   int32
	Scheme string
	Auth   []byte
}

func (r *AuthPacket) Decode(d *Decoder) { r.Type, r.Scheme, r.Auth = d.Int(), d.String(), d.Buffer() }
func (r *AuthPacket) Encode(e *Encoder) { e.Int(r.Type); e.String(r.Scheme); e.Buffer(r.Auth) }

// WatcherEvent is the body of a notification (xid -1).
type WatcherEvent struct {
	Type, State int32
	Path        string
}

func (r *WatcherEvent) Decode(d *Decoder) { r.Type, r.State, r.Path = d.Int(), d.Int(), d.String() }
func (r *WatcherEvent) Encode(e *Encoder) { e.Int(r.Type); e.Int(r.State); e.String(r.Path) }

// Create2Response answers create2 and createContainer.
type Create2Response struct {
	Path string
	Stat Stat
}

func (r *Create2Response) Decode(d *Decoder) { r.Path = d.String(); r.Stat.Decode(d) }
func (r *Create2Response) Encode(e *Encoder) { e.String(r.Path); r.Stat.Encode(e) }

// GetDataResponse answers getData.
type GetDataResponse struct {
	Data []byte
	Stat Stat
}

func (r *GetDataResponse) Decode(d *Decoder) { r.Data = d.Buffer(); r.Stat.Decode(d) }
func (r *GetDataResponse) Encode(e *Encoder) { e.Buffer(r.Data); r.Stat.Encode(e) }

// ChildrenResponse answers getChildren and, with WithStat, getChildren2.
type ChildrenResponse struct {
	Children []string
	Stat     Stat
	WithStat bool
}

func (r *ChildrenResponse) Decode(d *Decoder) {
	r.Children = d.Strings()
	if r.WithStat {
		r.Stat.Decode(d)
	}
}

func (r *ChildrenResponse) Encode(e *Encoder) {
	e.Strings(r.Children)
	if r.WithStat {
		r.Stat.Encode(e)
	}
}

// Record is any of the above.
type Record interface {
	Decode(*Decoder)
	Encode(*Encoder)
}

// Unmarshal decodes b into r and reports malformed or trailing-garbage-free
// errors (trailing bytes are tolerated, as Java's readers do).
func Unmarshal(b []byte, r Record) error {
	d := NewDecoder(b)
	r.Decode(d)
	return d.Err()
}

// ErrorResponse is the 4-byte body of a successful addWatch reply, which
// the Java client insists on reading.
type ErrorResponse struct{ Err int32 }

func (r *ErrorResponse) Decode(d *Decoder) { r.Err = d.Int() }
func (r *ErrorResponse) Encode(e *Encoder) { e.Int(r.Err) }

// MultiOp is one operation of a multi request: its opcode and, for the
// operations the door runs in a multi (delete, check), its path and
// version.
type MultiOp struct {
	Type    int32
	Path    string
	Version int32
}

// MultiRequest is the body of multi: operations, each a MultiHeader
// {type, done, err} and its record, ending with a header whose done is
// true. Decoding stops at the first operation other than delete or check
// (Unsupported is then that opcode), whose record it cannot skip.
type MultiRequest struct {
	Ops         []MultiOp
	Unsupported int32
}

func (r *MultiRequest) Decode(d *Decoder) {
	for d.Err() == nil {
		typ, done := d.Int(), d.Bool()
		d.Int() // err
		if done || d.Err() != nil {
			return
		}
		if typ != OpDelete && typ != OpCheck {
			r.Unsupported = typ
			d.take(d.Remaining()) // the rest cannot be read without its type
			return
		}
		op := MultiOp{Type: typ}
		op.Path, op.Version = d.String(), d.Int()
		r.Ops = append(r.Ops, op)
	}
}

func (r *MultiRequest) Encode(e *Encoder) {
	for _, op := range r.Ops {
		e.Int(op.Type)
		e.Bool(false)
		e.Int(-1)
		e.String(op.Path)
		e.Int(op.Version)
	}
	if r.Unsupported != 0 {
		e.Int(r.Unsupported)
		e.Bool(false)
		e.Int(-1)
		return
	}
	e.Int(-1)
	e.Bool(true)
	e.Int(-1)
}

// MultiResponse answers multi: per operation a MultiHeader and, for an
// error, ErrorResult{err}; delete and check have no body. Errs[i] is the
// code of operation i (0 for success).
type MultiResponse struct {
	Types []int32
	Errs  []int32
}

func (r *MultiResponse) Encode(e *Encoder) {
	for i, code := range r.Errs {
		typ := r.Types[i]
		if code != ErrOK || r.failed() {
			typ = -1 // OpCode.error: every result of a failed multi
		}
		e.Int(typ)
		e.Bool(false)
		e.Int(code)
		if typ == -1 {
			e.Int(code)
		}
	}
	e.Int(-1)
	e.Bool(true)
	e.Int(-1)
}

func (r *MultiResponse) failed() bool {
	for _, c := range r.Errs {
		if c != ErrOK {
			return true
		}
	}
	return false
}

func (r *MultiResponse) Decode(d *Decoder) {
	for d.Err() == nil {
		typ, done, code := d.Int(), d.Bool(), d.Int()
		if done || d.Err() != nil {
			return
		}
		if typ == -1 {
			code = d.Int()
		}
		r.Types, r.Errs = append(r.Types, typ), append(r.Errs, code)
	}
}
