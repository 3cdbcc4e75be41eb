package gossip

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/hashicorp/serf/coordinate"
)

// The ack payload is sent with every probe answer, about once per
// ProbeInterval per member, so its size is most of a quiet member's
// traffic. It carries our Vivaldi coordinate and our digest summary:
//
//	0xA1  summary uint64  error, adjustment, height float32  n byte  vec n×float32
//
// 54 bytes for the default 8 dimensions, where the coordinate alone took
// ~230 bytes of JSON. float32 keeps ~7 significant digits, far finer than
// the estimate's own error. The summary lets the prober run anti-entropy
// off the probe it makes anyway (see noteSummary), instead of a separate
// summary packet per AntiEntropyInterval. A payload starting with '{' is an
// older agent's JSON coordinate, still understood, with no summary.
const ackV1 = 0xA1

var errAckPayload = errors.New("malformed ack payload")

func encodeAck(sum uint64, c *coordinate.Coordinate) []byte {
	b := make([]byte, 0, 1+8+12+1+4*len(c.Vec))
	b = append(b, ackV1)
	b = binary.LittleEndian.AppendUint64(b, sum)
	for _, f := range []float64{c.Error, c.Adjustment, c.Height} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f)))
	}
	b = append(b, byte(len(c.Vec)))
	for _, f := range c.Vec {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f)))
	}
	return b
}

// decodeAck reads a v1 payload; hasSum is false for an older agent's JSON.
func decodeAck(b []byte) (c coordinate.Coordinate, sum uint64, hasSum bool, err error) {
	if len(b) > 0 && b[0] == '{' {
		return c, 0, false, errLegacyAck
	}
	if len(b) < 22 || b[0] != ackV1 {
		return c, 0, false, errAckPayload
	}
	sum = binary.LittleEndian.Uint64(b[1:])
	f := func(i int) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))) }
	c.Error, c.Adjustment, c.Height = f(9), f(13), f(17)
	n := int(b[21])
	if len(b) != 22+4*n {
		return c, 0, false, errAckPayload
	}
	c.Vec = make([]float64, n)
	for i := range c.Vec {
		c.Vec[i] = f(22 + 4*i)
	}
	return c, sum, true, nil
}

// errLegacyAck marks a JSON payload, decoded by the caller.
var errLegacyAck = errors.New("legacy JSON ack payload")
