package gossip

import (
	"fmt"
	"testing"

	"github.com/namecast/namecast/routes"
)

// Answering a pull for one small origin, as anti-entropy does most often
// (a broker's few topics, an agent's own URL). In a join storm of 150
// agents each answered ~400 such pulls in its first minute.
func BenchmarkAnswerSmallPull(b *testing.B) {
	for _, deflate := range []bool{false, true} {
		b.Run(fmt.Sprintf("deflate=%v", deflate), func(b *testing.B) {
			g := newBare(b, "a")
			var recs []routes.Record
			for i := range 5 {
				recs = append(recs, routes.Record{Queue: &routes.Queue{Topic: fmt.Sprintf("topic-%d", i), BrokerName: "broker-a", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}})
			}
			g.table.ApplyLocal(recs, nil)
			sent := 0
			g.sentReliable = func(msg []byte) { sent += len(msg) }
			g.members["x"] = &member{status: StatusAlive, addr: "127.0.0.1:1"}
			p := pull{From: "x", Origins: []string{"a"}, Bin: routes.BinaryVersion, Deflate: deflate}
			b.ReportAllocs()
			for b.Loop() {
				g.sendSnapshots(p)
			}
			if sent == 0 {
				b.Fatal("no answer was sent")
			}
		})
	}
}
