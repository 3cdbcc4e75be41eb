package memlimit

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"auto": 0, "off": math.MaxInt64, "64MiB": 64 << 20, "64MB": 64 << 20,
		"1GiB": 1 << 30, "20000000": 20000000, " 32 MiB ": 32 << 20, "16384KiB": 16 << 20} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "64M", "lots", "-1MiB", "1MiB", "0", "99999999999GiB"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

// The auto limit follows the live heap: after the heap grows by 40 MB of
// live data and a collection, the limit is above it by the headroom, and
// it comes down again once the data is garbage.
func TestAutoFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	desc, stop, err := Apply("auto")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	t.Log(desc)
	// The limit is set by a finalizer, on its own goroutine, after a
	// collection: collect until it shows what is asked.
	limitWhen := func(what string, ok func(int64) bool) int64 {
		var l int64
		testutil.Eventually(t, 10*time.Second, func() error {
			runtime.GC()
			if l = debug.SetMemoryLimit(-1); !ok(l) {
				return fmt.Errorf("limit %d MiB, want it %s", l>>20, what)
			}
			return nil
		})
		return l
	}
	small := limitWhen("set", func(l int64) bool { return l < math.MaxInt64 })
	if small < MinLimit || small > 64<<20 {
		t.Fatalf("limit of an almost empty process: %d MiB", small>>20)
	}
	live := make([][]byte, 40)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	// 40 MiB more live: the limit is above the floor, at the live heap
	// plus a quarter of it plus the runtime's own memory, give or take
	// the test's own garbage.
	big := limitWhen("raised to ~50 MiB or more", func(l int64) bool { return l >= 50<<20 })
	runtime.KeepAlive(live)
	if big > 96<<20 {
		t.Fatalf("limit %d MiB with ~40 MiB live: want it about 40 MiB plus a quarter of it, plus the runtime's memory", big>>20)
	}
	live = nil
	limitWhen("back down once the 40 MiB are garbage", func(l int64) bool { return l <= small+4<<20 })
}

// The limit is the live heap plus its headroom plus the runtime's own
// memory, never under MinLimit: a small heap collects by GOGC alone.
func TestAutoLimitFormula(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ other, live, want int64 }{
		{4 * mib, 2 * mib, MinLimit},                   // an empty agent: the floor
		{5 * mib, 14 * mib, MinLimit},                  // 100 × 1000 synced: 5+14+4 = 23 MiB, under the floor
		{5 * mib, 16 * mib, 5*mib + 16*mib + 4*mib},    // the 4 MiB headroom: 25 MiB
		{6 * mib, 56 * mib, 6*mib + 56*mib + 56*mib/4}, // 500 × 1000: a quarter of the live heap
	} {
		if got := autoLimit(c.other, c.live); got != c.want {
			t.Errorf("autoLimit(other %d MiB, live %d MiB) = %.2f MiB, want %.2f MiB", c.other/mib, c.live/mib,
				float64(got)/mib, float64(c.want)/mib)
		}
	}
}

func TestApplyFixedAndOff(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	if _, _, err := Apply("48MiB"); err != nil || debug.SetMemoryLimit(-1) != 48<<20 {
		t.Fatalf("48MiB: %v, limit %d", err, debug.SetMemoryLimit(-1))
	}
	if _, _, err := Apply("off"); err != nil || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Fatalf("off: %v, limit %d", err, debug.SetMemoryLimit(-1))
	}
	if _, _, err := Apply("3"); err == nil {
		t.Fatal("a 3-byte limit was accepted")
	}
}
