package gossip

import (
	"bytes"
	"compress/lzw"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/namecast/namecast/gossip/gossiptest"
	"github.com/namecast/namecast/internal/testutil"
)

// memberlist's push/pull goes compressed though memberlist's compression is
// off, and a member that does not compress it (as agents before it did not)
// reads it: memberlist itself decodes it, or the join would fail.
func TestPushPullIsCompressedAndRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		net := gossiptest.NewNetwork(4)
		const n = 30
		gs := spiralCluster(t, net, n, func(g *Gossip) { g.cfg.plainPushPull = g.name == "h0" })
		defer func() { stopAll(net, gs) }()

		// A join is one push/pull, answered with every member's state.
		answer := func(to *Gossip, name string, plain bool) uint64 {
			j := startMember(t, net, name, func(c *Config) { c.plainPushPull = plain }, nil)
			gs = append(gs, j)
			before := net.Stats(to.name).StreamBytesSent
			if _, err := j.Join([]string{to.LocalAddr()}); err != nil {
				t.Fatal(err)
			}
			// A pipe's Write returns, and is counted, once the joiner has
			// read it all, which may be after Join returns.
			synctest.Wait()
			return net.Stats(to.name).StreamBytesSent - before
		}
		plain := answer(gs[0], "x", true)
		packed := answer(gs[1], "y", false)
		t.Logf("push/pull answering a join, %d members: %d bytes plain, %d compressed", n+1, plain, packed)
		if plain < 60*n {
			t.Fatalf("the plain answer to a join is %d bytes: want the state of %d members, 60 bytes or more each", plain, n+1)
		}
		if packed*2 > plain {
			t.Fatalf("compressed push/pull is %d bytes, plain %d: want under half", packed, plain)
		}

		// h1's state, n+2 members, compressed, pushed to h0, which does not
		// compress: a push/pull h0 cannot read fails the join.
		if _, err := gs[1].Join([]string{gs[0].LocalAddr()}); err != nil {
			t.Fatalf("h0 could not read h1's compressed push/pull: %v", err)
		}
		testutil.Eventually(t, time.Minute, func() error { return seeStatus(gs, "", StatusAlive, n+2) })
	})
}

func TestShrinkPushPullLeavesOtherMessagesAlone(t *testing.T) {
	state := append([]byte{mlPushPullMsg}, bytes.Repeat([]byte("node-17 10.0.0.17 7946 alive "), 100)...)
	user := append([]byte{8}, state[1:]...)
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"a user message", user},
		{"a small push/pull", state[:compressPushPullFrom-1]},
		{"an encrypted message", append([]byte{10}, state[1:]...)},
	} {
		if got := shrinkPushPull(tc.msg); !bytes.Equal(got, tc.msg) {
			t.Errorf("%s was changed", tc.name)
		}
	}

	got := shrinkPushPull(state)
	if got[0] != mlCompressMsg || len(got) >= len(state)/4 {
		t.Fatalf("push/pull of %d bytes became %d, type %d: want a compressMsg under a quarter", len(state), len(got), got[0])
	}
	// Decoded as memberlist's readStream decodes it.
	var c lzwMsg
	if err := codec.NewDecoder(bytes.NewReader(got[1:]), &codec.MsgpackHandle{}).Decode(&c); err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(lzw.NewReader(bytes.NewReader(c.Buf), lzw.LSB, mlLZWLitWidth))
	if err != nil || c.Algo != mlLZWAlgo || !bytes.Equal(back, state) {
		t.Fatalf("decoded algo %d, %d bytes (err %v), want the %d-byte push/pull back", c.Algo, len(back), err, len(state))
	}
}
