package gossip

import (
	"bytes"
	"compress/flate"
	"strings"
	"testing"
)

// Snapshot parts deflate several times over (topic names, broker names and
// queue numbers repeat), and a deflated message inflates back to exactly
// the parts it carried.
func TestDeflatedPartsRoundTripSmaller(t *testing.T) {
	sender, _, sent := pair(t, 3000)
	sender.sendSnapshots(pull{From: "receiver", Origins: []string{"sender"}, Bin: 1})
	plain := append([][]byte(nil), *sent...)
	*sent = nil
	sender.sendSnapshots(pull{From: "receiver", Origins: []string{"sender"}, Bin: 1, Deflate: true})
	if len(*sent) != len(plain) {
		t.Fatalf("%d deflated messages for %d plain ones", len(*sent), len(plain))
	}
	var in, out int
	for i, m := range *sent {
		got, err := inflate(m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, plain[i]) {
			t.Fatalf("message %d inflates to other bytes than the plain one", i)
		}
		in, out = in+len(plain[i]), out+len(m)
	}
	if out*3 > in {
		t.Fatalf("parts deflate from %d to %d bytes: less than 3x", in, out)
	}
	t.Logf("%d messages: %d bytes plain, %d deflated", len(plain), in, out)
}

// A message that inflates past memberlist's cap on a message is refused
// before it is read into memory, and changes nothing.
func TestDeflatedPartsThatInflateTooFarAreRefused(t *testing.T) {
	var z bytes.Buffer
	z.WriteByte(msgPartsDeflated)
	zw, _ := flate.NewWriter(&z, flate.BestSpeed)
	zeros := make([]byte, 1<<20)
	for range maxInflatedMessage>>20 + 1 {
		_, _ = zw.Write(zeros)
	}
	_ = zw.Close()
	if _, err := inflate(z.Bytes()); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a %d-byte message inflating past %d bytes: err %v", z.Len(), maxInflatedMessage, err)
	}
	_, receiver, _ := pair(t, 0)
	(*delegate)(receiver).NotifyMsg(z.Bytes())
	if _, n := receiver.table.Len(); n != 0 {
		t.Fatalf("%d records merged", n)
	}
	if _, err := inflate([]byte{msgPartsDeflated, 0xff, 0x00}); err == nil {
		t.Fatal("garbage inflated without error")
	}
}
