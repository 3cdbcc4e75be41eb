package gossip

import (
	"bytes"
	"testing"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/routes"
)

// newUnstarted is a Gossip whose delegates can be driven directly: no
// memberlist, no network, no loops.
func newUnstarted(t testing.TB, name string) *Gossip {
	cfg, _ := Profile("local")
	cfg.Table = routes.NewTable(name, 1)
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// FuzzNotifyMsg feeds arbitrary bytes to the message handler: nothing may
// panic, and nothing but well-formed ops of a live origin may change the
// table.
func FuzzNotifyMsg(f *testing.F) {
	rec := routes.Record{Queue: &routes.Queue{Topic: "T", BrokerName: "b", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}}
	f.Add(encode(msgOps, routes.Delta{Origin: "peer", Inc: 1, Ops: []routes.Op{{Key: rec.Key(), Seq: 1, Rec: &rec}}}))
	f.Add(encode(msgNotice, notice{Origin: "peer", Entry: routes.DigestEntry{Inc: 1, Seq: 9}}))
	f.Add(encode(msgSummary, summary{From: "peer", Sum: 42}))
	f.Add(encode(msgDigest, digestMsg{From: "peer", Digest: routes.Digest{"peer": {Inc: 1, Seq: 3, Hash: 7}}, Reply: true}))
	f.Add(encode(msgPull, pull{From: "peer", Origins: []string{"peer", "me"}}))
	f.Add(encode(msgSnapshots, snapshots{From: "peer", Snaps: []routes.Snapshot{{Origin: "peer", Inc: 1, Seq: 1, Authoritative: true}}}))
	f.Add(encode(msgPull, pull{From: "peer", Origins: []string{"peer"}, Bin: routes.BinaryVersion}))
	w := newPartsWriter("peer", func(msg []byte) { f.Add(append([]byte(nil), msg...)) })
	snap := routes.Snapshot{Origin: "peer", Inc: 1, Seq: 2, Authoritative: true, Ops: []routes.Op{{Key: rec.Key(), Seq: 1, Rec: &rec}, {Key: "queue/b/U", Seq: 2}}}
	snap.EncodeBinaryParts(1<<10, w.add)
	w.flush()
	d := newDeflater()
	w = newPartsWriter("peer", func(msg []byte) { f.Add(bytes.Clone(d.deflate(msg))) })
	snap.EncodeBinaryParts(1<<10, w.add)
	w.flush()
	f.Add([]byte{msgParts, routes.BinaryVersion, 4, 'p', 'e', 'e', 'r', 200})
	f.Add(encode(msgQuery, queryMsg{ID: "1", From: "peer", Name: "keyring"}))
	f.Add([]byte{msgOps, '{', '"', 'o'})
	f.Add([]byte{0xff})
	f.Fuzz(func(t *testing.T, msg []byte) {
		g := newUnstarted(t, "me")
		g.upsert(&memberlist.Node{Name: "peer", Meta: []byte(`{"inc":"1"}`)}, false)
		(*delegate)(g).NotifyMsg(msg)
		(*delegate)(g).MergeRemoteState(msg, false)
		// Whatever was applied must be valid records of the live peer.
		for _, o := range g.table.Origins() {
			if o != "me" && o != "peer" && o != routes.RulesOrigin {
				t.Fatalf("records of %q, which is not a live member", o)
			}
		}
	})
}

func TestDeltaFromDeadOriginIsRefused(t *testing.T) {
	g := newUnstarted(t, "me")
	rec := routes.Record{Queue: &routes.Queue{Topic: "T", BrokerName: "b"}}
	msg := encode(msgOps, routes.Delta{Origin: "ghost", Inc: 1, Ops: []routes.Op{{Key: rec.Key(), Seq: 1, Rec: &rec}}})
	(*delegate)(g).NotifyMsg(msg)
	if _, n := g.table.Len(); n != 0 {
		t.Fatal("applied a delta of an origin that is not a live member")
	}
	g.upsert(&memberlist.Node{Name: "ghost", Meta: []byte(`{"inc":"1"}`)}, false)
	(*delegate)(g).NotifyMsg(msg)
	if _, n := g.table.Len(); n != 1 {
		t.Fatal("refused a delta of a live origin")
	}
	(*events)(g).NotifyLeave(&memberlist.Node{Name: "ghost", State: memberlist.StateDead})
	if _, n := g.table.Len(); n != 0 {
		t.Fatal("records of a dead member survive")
	}
	// A third party still relaying the old op must not bring it back.
	(*delegate)(g).NotifyMsg(msg)
	if _, n := g.table.Len(); n != 0 {
		t.Fatal("re-learned a dead member's records from a third party")
	}
}
