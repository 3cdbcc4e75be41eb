package gossip

import (
	"fmt"
	"testing"

	"github.com/namecast/namecast/routes"
)

// One side of a digest exchange: encoding our digest and decoding the
// peer's, at the sizes of a 150-agent start on one host and of a 1,000-
// member cluster. Each differing summary costs one of these on each side
// (ours encoded, theirs decoded); in
// a 150-agent registering start that spiralled they were the largest
// part of our own CPU (docs/bench/history.md).
func BenchmarkDigestEncodeDecode(b *testing.B) {
	for _, n := range []int{150, 1000} {
		b.Run(fmt.Sprintf("origins=%d", n), func(b *testing.B) {
			d := routes.Digest{}
			for i := range n {
				d[fmt.Sprintf("agent-%04d", i)] = routes.DigestEntry{Inc: 1764633600 + uint64(i), Seq: uint64(i % 7), Hash: 0x9e3779b97f4a7c15 * uint64(i+1)}
			}
			size := 0
			b.ReportAllocs()
			for b.Loop() {
				msg := encode(msgDigest, digestMsg{From: "agent-0000", Digest: d, Reply: true})
				var got digestMsg
				if err := decode(msg, &got); err != nil || len(got.Digest) != n {
					b.Fatalf("decoded %d origins, err %v", len(got.Digest), err)
				}
				size = len(msg)
			}
			b.ReportMetric(float64(size), "B/msg")
		})
	}
}
