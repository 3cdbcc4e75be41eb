package gossip

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/hashicorp/serf/coordinate"
)

func TestAckPayloadRoundTrip(t *testing.T) {
	c := coordinate.NewCoordinate(coordinate.DefaultConfig())
	for i := range c.Vec {
		c.Vec[i] = 0.000123 * float64(i+1)
	}
	c.Error, c.Adjustment, c.Height = 0.7, -0.00002, 0.00001
	b := encodeAck(0xfeedface12345678, c)
	if len(b) != 54 {
		t.Fatalf("payload is %d bytes, want 54", len(b))
	}
	j, _ := json.Marshal(c)
	t.Logf("ack payload %d bytes; the JSON coordinate was %d", len(b), len(j))
	got, sum, hasSum, err := decodeAck(b)
	if err != nil || !hasSum || sum != 0xfeedface12345678 {
		t.Fatalf("decode: %v, sum %x, hasSum %v", err, sum, hasSum)
	}
	other := coordinate.NewCoordinate(coordinate.DefaultConfig())
	other.Vec[0] = 0.01
	if a, b := got.DistanceTo(other).Seconds(), c.DistanceTo(other).Seconds(); !got.IsValid() || math.Abs(a-b) > 1e-6*b {
		t.Fatalf("RTT estimate %v from the decoded coordinate, %v from the original", a, b)
	}
	// An older agent's JSON coordinate is recognised, not refused.
	if _, _, hasSum, err := decodeAck(j); err != errLegacyAck || hasSum {
		t.Fatalf("legacy payload: %v", err)
	}
	for _, bad := range [][]byte{nil, {ackV1}, b[:30], append(append([]byte(nil), b...), 0), {0x00, 1, 2}} {
		if _, _, _, err := decodeAck(bad); err == nil {
			t.Errorf("decoded malformed payload %x", bad)
		}
	}
}

func FuzzAckPayload(f *testing.F) {
	f.Add(encodeAck(1, coordinate.NewCoordinate(coordinate.DefaultConfig())))
	f.Add([]byte(`{"Vec":[0]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, _, _, err := decodeAck(b)
		if err == nil && len(c.Vec) != int(b[21]) {
			t.Fatalf("vec of %d, header says %d", len(c.Vec), b[21])
		}
	})
}
