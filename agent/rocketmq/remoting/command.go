package remoting

import "fmt"

// SerializeType says how a frame's header is encoded (§1.2, byte 4).
type SerializeType uint8

const (
	// SerializeJSON is the header type every known client uses by default.
	SerializeJSON SerializeType = 0
	// SerializeRocketMQ is the compact binary header of §1.4.
	SerializeRocketMQ SerializeType = 1
)

func (t SerializeType) String() string {
	switch t {
	case SerializeJSON:
		return "JSON"
	case SerializeRocketMQ:
		return "ROCKETMQ"
	}
	return fmt.Sprintf("SerializeType(%d)", uint8(t))
}

// Bits of Command.Flag.
const (
	FlagResponse int32 = 1 << 0
	FlagOneway   int32 = 1 << 1
)

// Command is one RemotingCommand: a request or a response, with its header
// fields and its body. The zero value is a JSON-encoded request with code 0.
type Command struct {
	Code     int // request code on requests, response code on responses
	Language LanguageCode
	Version  int   // sender's MQVersion ordinal; gates body encodings (§1.7)
	Opaque   int32 // request id; a response carries its request's
	Flag     int32 // FlagResponse, FlagOneway
	Remark   string

	// ExtFields carries every request or response header field as a
	// string (§1.3). It may be nil; reading a nil map is fine, use SetExt
	// to write.
	ExtFields map[string]string

	// Body is the payload after the header. A decoded Body is owned by the
	// Command: decoders never reuse its memory.
	Body []byte

	// SerializeType is the header encoding this command arrived in, or is
	// to be written in.
	SerializeType SerializeType
}

// IsResponse reports whether the command answers a request.
func (c *Command) IsResponse() bool { return c.Flag&FlagResponse != 0 }

// IsOneway reports whether the sender expects no answer; a server processes
// such a request and writes nothing back.
func (c *Command) IsOneway() bool { return c.Flag&FlagOneway != 0 }

// SetExt sets one ext field, creating the map on first use.
func (c *Command) SetExt(key, value string) {
	if c.ExtFields == nil {
		c.ExtFields = make(map[string]string, 4)
	}
	c.ExtFields[key] = value
}

// NewRequest builds a JSON-encoded request as our own tools and test
// clients send it. The caller assigns Opaque.
func NewRequest(code int, ext map[string]string, body []byte) *Command {
	return &Command{
		Code:      code,
		Language:  LanguageJava,
		Version:   VersionCurrent,
		ExtFields: ext,
		Body:      body,
	}
}

// NewResponse builds the answer to req: same opaque, response flag set,
// Java's language and a current version (old Java enums know JAVA, and the
// Go client only needs version to fit in int16).
//
// The header is JSON whatever req used: that is what a Java NameServer does
// by default (§1.5), and every client accepts it.
func NewResponse(req *Command, code int, remark string) *Command {
	return &Command{
		Code:     code,
		Language: LanguageJava,
		Version:  VersionCurrent,
		Opaque:   req.Opaque,
		Flag:     FlagResponse,
		Remark:   remark,
	}
}

// String formats the header for logs; the body is summarised by length.
func (c *Command) String() string {
	kind := "request"
	if c.IsResponse() {
		kind = "response"
	}
	return fmt.Sprintf("%s{code=%d opaque=%d flag=%d lang=%s version=%d remark=%q ext=%v body=%dB %s}",
		kind, c.Code, c.Opaque, c.Flag, c.Language, c.Version, c.Remark, c.ExtFields, len(c.Body), c.SerializeType)
}
