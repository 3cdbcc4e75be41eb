package host

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// A Dubbo URL's key is the whole URL, held by the table and by the lease
// of its HTTP registration: it is held once, not once per holder. Before,
// the table, the lease and the lease store's name of the lease each held
// a copy (8 KB URLs: heap 3.2 times the bytes of the records).
func TestURLKeyBytesAreHeldOnce(t *testing.T) {
	table := routes.NewTable("self", 1)
	h := New(Config{Table: table, Budget: routes.Budget{Records: 1 << 20}})
	pad := strings.Repeat("p", 8000)
	const n = 500
	keep := make([]routes.Record, 0, n)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		raw := fmt.Sprintf("dubbo://10.0.%d.%d:20880/com.x.Y?pad=%s", i/250, i%250, pad)
		rec := routes.Record{URL: &routes.URL{Interface: "com.x.Y", Category: "providers", URL: raw}}
		key := routes.URLKey("com.x.Y", "providers", raw) // as the HTTP door names its lease
		l := lease.Lease{Door: "http", ID: key, Keys: []string{key}}
		if _, err := h.Hold(l, []routes.Record{rec}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Apply([]routes.Record{rec}, nil); err != nil {
			t.Fatal(err)
		}
		keep = append(keep, rec)
	}
	keep = nil
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	held := table.Usage("self").Bytes
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if ratio := float64(grown) / float64(held); ratio > 1.8 {
		t.Fatalf("%d URLs of %d bytes in all take %d bytes of heap: %.2f× (want ≤ 1.8×)", n, held, grown, ratio)
	} else {
		t.Logf("%.2f× the bytes held", ratio)
	}
	runtime.KeepAlive(h)
}
