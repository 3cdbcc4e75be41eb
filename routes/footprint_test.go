package routes

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
)

// footprintTable is what a joining agent holds after syncing brokers
// origins of one broker and topics queues each: every snapshot goes through
// JSON, as it does on the wire, so strings are the decoder's, not shared
// with the sender's.
func footprintTable(tb testing.TB, brokers, topics int) *Table {
	tb.Helper()
	tbl := NewTable("joiner", 1)
	for b := range brokers {
		name := fmt.Sprintf("broker-%03d", b)
		src := NewTable(fmt.Sprintf("agent-%03d", b), 7)
		puts := []Record{broker("DefaultCluster", name, 0, fmt.Sprintf("10.0.%d.%d:10911", b/250, b%250))}
		for i := range topics {
			puts = append(puts, queue(name, fmt.Sprintf("topic-%04d", i), 8))
		}
		src.ApplyLocal(puts, nil)
		snap, _ := src.Snapshot(src.Local())
		buf, err := json.Marshal(snap)
		if err != nil {
			tb.Fatal(err)
		}
		var wire Snapshot
		if err := json.Unmarshal(buf, &wire); err != nil {
			tb.Fatal(err)
		}
		if res := tbl.Merge(wire); res.Applied != topics+1 {
			tb.Fatalf("merged %+v", res)
		}
	}
	return tbl
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestFootprintPerRecord bounds what one record costs in a replica's heap
// (its entry, key, record and view index), the figure docs/performance.md
// builds the sidecar's memory on. It reports the table's heap per record
// and, apart, the marginal cost (a 10-origin table less a 1-origin one,
// per record of the difference), which leaves out what a table costs
// whatever its size (the watch slots, 512 KiB). NAMECAST_HEAPPROFILE=file
// writes a heap profile of the table for go tool pprof;
// NAMECAST_FOOTPRINT_BROKERS=500 measures 500 origins instead of 10.
func TestFootprintPerRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 11,011 records")
	}
	brokers, topics := 10, 1000
	if s := os.Getenv("NAMECAST_FOOTPRINT_BROKERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			t.Fatalf("NAMECAST_FOOTPRINT_BROKERS=%q: want a number of origins, at least 2", s)
		}
		brokers = n
	}
	if os.Getenv("NAMECAST_HEAPPROFILE") != "" {
		runtime.MemProfileRate = 1
	}
	base := liveHeap()
	one := footprintTable(t, 1, topics)
	withOne := liveHeap()
	runtime.KeepAlive(one)
	one = nil
	before := liveHeap()
	tbl := footprintTable(t, brokers, topics)
	after := liveHeap()
	if p := os.Getenv("NAMECAST_HEAPPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		_ = pprof.WriteHeapProfile(f)
		f.Close()
	}
	_, records := tbl.Len()
	per := float64(after-before) / float64(records)
	marginal := (float64(after-before) - float64(withOne-base)) / float64(records-records/brokers)
	t.Logf("%d records: %.1f MB of live heap, %.0f bytes per record, %.0f marginal", records, float64(after-before)/1e6, per, marginal)
	if _, ok := tbl.TopicRoute("topic-0001"); !ok {
		t.Fatal("no route")
	}
	if per > 200 {
		t.Fatalf("%.0f bytes per record, want ≤ 200", per)
	}
	runtime.KeepAlive(tbl)
}

// BenchmarkTopicRoute is the query path P3 measures, without the network:
// one topic's route from a table of 100 brokers × 1000 topics.
func BenchmarkTopicRoute(b *testing.B) {
	tbl := footprintTable(b, 100, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok := tbl.TopicRoute(fmt.Sprintf("topic-%04d", i%1000)); !ok {
			b.Fatal("no route")
		}
	}
}

// BenchmarkTopicRouteIndex is what an HTTP query adds to TopicRoute: the
// index of the route's view (X-Namecast-Index), read on every answer.
func BenchmarkTopicRouteIndex(b *testing.B) {
	tbl := footprintTable(b, 100, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if tbl.IndexOf(tbl.WatchTopicRoute(fmt.Sprintf("topic-%04d", i%1000))) == 0 {
			b.Fatal("no index")
		}
	}
}
