package routes

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// LocalRecords answers every prefix as a scan of all the agent's records
// would, through random puts, replaces and deletes of brokers, queues and
// znodes (whose paths have more slashes), including groups that empty and
// come back, and prefixes of groups that do not exist. Replicated records
// of another origin under the same prefixes are never listed.
func TestLocalRecordsByGroupMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	tb := NewTable("me", 1)
	other := NewTable("other", 1)
	var otherRecs []Record
	for b := range 3 {
		otherRecs = append(otherRecs, queue(fmt.Sprintf("b%d", b), "T0", 1))
	}
	other.ApplyLocal(otherRecs, nil)
	snap, _ := other.Snapshot("other")
	tb.Merge(snap)

	rec := func() Record {
		b := fmt.Sprintf("b%d", rng.Intn(4))
		switch rng.Intn(3) {
		case 0:
			return Record{Broker: &Broker{Cluster: "c", Name: b, ID: int64(rng.Intn(2)), Addr: fmt.Sprintf("10.0.0.%d:10911", rng.Intn(9))}}
		case 1:
			return queue(b, fmt.Sprintf("T%d", rng.Intn(6)), 1+rng.Intn(3))
		}
		return Record{Znode: &Znode{Path: fmt.Sprintf("/z/%s/n%d", b, rng.Intn(3))}}
	}
	prefixes := []string{"", "queue/", "broker/", "znode/", "znode/z/", "znode/z/b1/"}
	for b := range 5 { // b4 is never registered
		n := fmt.Sprintf("b%d", b)
		prefixes = append(prefixes, QueuePrefix(n), BrokerPrefix(n), QueueKey(n, "T1"), "queue/"+n)
	}
	for step := range 3000 {
		var puts []Record
		var dels []string
		for range 1 + rng.Intn(4) {
			r := rec()
			if rng.Intn(3) == 0 {
				dels = append(dels, r.Key())
			} else {
				puts = append(puts, r)
			}
		}
		tb.ApplyLocal(puts, dels)
		all := tb.LocalRecords("")
		for _, p := range prefixes {
			var want []string
			for _, r := range all {
				if strings.HasPrefix(r.Key(), p) {
					want = append(want, r.Key())
				}
			}
			var got []string
			for _, r := range tb.LocalRecords(p) {
				got = append(got, r.Key())
			}
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: LocalRecords(%q) = %q, want %q", step, p, got, want)
			}
		}
		st := tb.origins["me"]
		n := 0
		for g, s := range st.groups {
			if s.len() == 0 {
				t.Fatalf("step %d: empty group %q kept", step, g)
			}
			n += s.len()
		}
		if n != st.live.len() {
			t.Fatalf("step %d: %d records in groups, %d live", step, n, st.live.len())
		}
	}
}

// BenchmarkLocalRecordsOfBroker is what a broker's registration reads of an
// agent that carries 50 brokers × 1000 topics: that broker's records.
func BenchmarkLocalRecordsOfBroker(b *testing.B) {
	tb := brokerOrigin("o", 50)
	b.ReportAllocs()
	for b.Loop() {
		if n := len(tb.LocalRecords(QueuePrefix("broker-025"))); n != 1000 {
			b.Fatalf("%d records", n)
		}
	}
}
