package resp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
)

// Limits bound what one command may hold.
type Limits struct {
	MaxArgs    int // elements of one command array
	MaxBulk    int // bytes of one bulk string
	MaxCommand int // bytes of every bulk of one command together
	MaxInline  int // bytes of one inline command line
}

// DefaultLimits suit a registry door: a Dubbo URL is a few KiB, a command
// a few of them.
var DefaultLimits = Limits{MaxArgs: 1024, MaxBulk: 64 << 10, MaxCommand: 1 << 20, MaxInline: 64 << 10}

// ProtocolError is a request the reader cannot take: the server answers it
// with Error() as an error reply and closes the connection.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return "ERR Protocol error: " + e.Msg }

var (
	errMultibulk = &ProtocolError{"invalid multibulk length"}
	errBulk      = &ProtocolError{"invalid bulk length"}
	errInline    = &ProtocolError{"too big inline request"}
	errQuotes    = &ProtocolError{"unbalanced quotes in request"}
)

// Reader reads commands from a client.
type Reader struct {
	r   *bufio.Reader
	lim Limits
}

// NewReader reads commands from r within lim.
func NewReader(r io.Reader, lim Limits) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 16<<10), lim: lim}
}

// Buffered reports whether bytes of a next command are already read, so a
// server can answer a pipeline's commands before it flushes.
func (rd *Reader) Buffered() bool { return rd.r.Buffered() > 0 }

// ReadCommand reads the next command: its arguments, the first the
// command's name. An empty array or an empty inline line is skipped, as
// Redis skips it. The error is io.EOF at a clean end, a *ProtocolError for
// a request past the limits or malformed, or the connection's.
func (rd *Reader) ReadCommand() ([][]byte, error) {
	for {
		b, err := rd.r.Peek(1)
		if err != nil {
			return nil, err
		}
		var args [][]byte
		if b[0] == '*' {
			args, err = rd.readArray()
		} else {
			args, err = rd.readInline()
		}
		if err != nil || len(args) > 0 {
			return args, err
		}
	}
}

// line reads up to "\r\n" (a lone "\n" ends an inline line), at most max
// bytes before it; past that, tooLong, as soon as the bytes received say
// so (it never waits for the end of a line already too long).
func (rd *Reader) line(max int, tooLong error) ([]byte, error) {
	var buf []byte
	for {
		if rd.r.Buffered() == 0 {
			if _, err := rd.r.Peek(1); err != nil {
				if err == io.EOF && len(buf) > 0 {
					err = io.ErrUnexpectedEOF
				}
				return nil, err
			}
		}
		b, _ := rd.r.Peek(rd.r.Buffered())
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			if len(buf)+i > max+1 {
				return nil, tooLong
			}
			buf = append(buf, b[:i]...)
			rd.r.Discard(i + 1)
			if buf = bytes.TrimSuffix(buf, []byte{'\r'}); len(buf) > max {
				return nil, tooLong
			}
			return buf, nil
		}
		if len(buf)+len(b) > max+1 {
			return nil, tooLong
		}
		buf = append(buf, b...)
		rd.r.Discard(len(b))
	}
}

// number reads "<prefix><n>\r\n" with n in [min, max]; otherwise bad.
func (rd *Reader) number(min, max int64, bad error) (int64, error) {
	ln, err := rd.line(32, bad)
	if err != nil {
		return 0, err
	}
	n, perr := strconv.ParseInt(string(ln[1:]), 10, 64)
	if perr != nil || n < min || n > max {
		return 0, bad
	}
	return n, nil
}

func (rd *Reader) readArray() ([][]byte, error) {
	n, err := rd.number(-1<<31, int64(rd.lim.MaxArgs), errMultibulk)
	if err != nil || n <= 0 {
		return nil, err
	}
	args := make([][]byte, 0, min(n, 16))
	total := 0
	for range n {
		b, err := rd.r.Peek(1)
		if err != nil {
			return nil, eof(err)
		}
		if b[0] != '$' {
			return nil, &ProtocolError{"expected '$', got '" + string(b[0]) + "'"}
		}
		size, err := rd.number(0, int64(rd.lim.MaxBulk), errBulk)
		if err != nil {
			return nil, eof(err)
		}
		if total += int(size); total > rd.lim.MaxCommand {
			return nil, errBulk
		}
		arg := make([]byte, size+2)
		if _, err := io.ReadFull(rd.r, arg); err != nil {
			return nil, eof(err)
		}
		args = append(args, arg[:size])
	}
	return args, nil
}

func eof(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readInline reads one line as Redis' sdssplitargs splits it: words
// separated by spaces, "double quotes" with \n \r \t \b \a \\ \" and \xHH
// escapes, 'single quotes' with \' alone.
func (rd *Reader) readInline() ([][]byte, error) {
	ln, err := rd.line(rd.lim.MaxInline, errInline)
	if err != nil {
		return nil, err
	}
	args, ok := SplitArgs(ln)
	if !ok {
		return nil, errQuotes
	}
	if len(args) > rd.lim.MaxArgs {
		return nil, errMultibulk
	}
	return args, nil
}

// SplitArgs splits an inline command line; ok is false for unbalanced
// quotes (or a closing quote not followed by a space).
func SplitArgs(ln []byte) (args [][]byte, ok bool) {
	i := 0
	for {
		for i < len(ln) && isSpace(ln[i]) {
			i++
		}
		if i == len(ln) {
			return args, true
		}
		var cur []byte
		inq, insq := false, false
		for done := false; !done; {
			switch {
			case inq:
				if i == len(ln) {
					return nil, false
				}
				c := ln[i]
				if c == '\\' && i+3 < len(ln) && ln[i+1] == 'x' && isHex(ln[i+2]) && isHex(ln[i+3]) {
					cur = append(cur, hexVal(ln[i+2])<<4|hexVal(ln[i+3]))
					i += 3
				} else if c == '\\' && i+1 < len(ln) {
					i++
					cur = append(cur, unescape(ln[i]))
				} else if c == '"' {
					if i+1 < len(ln) && !isSpace(ln[i+1]) {
						return nil, false
					}
					done = true
				} else {
					cur = append(cur, c)
				}
			case insq:
				if i == len(ln) {
					return nil, false
				}
				c := ln[i]
				if c == '\\' && i+1 < len(ln) && ln[i+1] == '\'' {
					i++
					cur = append(cur, '\'')
				} else if c == '\'' {
					if i+1 < len(ln) && !isSpace(ln[i+1]) {
						return nil, false
					}
					done = true
				} else {
					cur = append(cur, c)
				}
			default:
				if i == len(ln) {
					done = true
					continue
				}
				switch c := ln[i]; {
				case isSpace(c):
					done = true
				case c == '"':
					inq = true
				case c == '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if i < len(ln) {
				i++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// IsProtocol reports whether err is a request the reader refused.
func IsProtocol(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe)
}
