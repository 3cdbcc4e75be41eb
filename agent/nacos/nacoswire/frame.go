package nacoswire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxMessage bounds one gRPC message, as Nacos' own server does by default
// (nacos.remote.server.grpc.sdk.max-inbound-message-size, 10 MiB).
const MaxMessage = 10 << 20

// ErrCompressed is returned for a message whose compressed flag is set:
// Nacos clients do not compress, and the door announces no grpc-encoding.
var ErrCompressed = errors.New("nacoswire: compressed gRPC message (no grpc-encoding is accepted)")

// ErrTooLarge is wrapped by ReadMessage for a message over its limit.
var ErrTooLarge = errors.New("nacoswire: message over the limit")

// ReadMessage reads one length-prefixed gRPC message of at most max bytes.
// It returns io.EOF at a clean end of stream (no byte of a next message),
// io.ErrUnexpectedEOF for a truncated one.
func ReadMessage(r io.Reader, max int) ([]byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	if hdr[0] != 0 {
		if hdr[0] == 1 {
			return nil, ErrCompressed
		}
		return nil, fmt.Errorf("nacoswire: gRPC message flag %d is neither 0 nor 1", hdr[0])
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if uint64(n) > uint64(max) {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, max)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(r, msg); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return msg, nil
}

// AppendMessage appends msg framed as one uncompressed gRPC message.
func AppendMessage(dst, msg []byte) []byte {
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(msg)))
	return append(dst, msg...)
}
