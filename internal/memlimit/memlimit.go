// Package memlimit sets the soft memory limit of a process that runs one
// agent (the namecast binary): --memory-limit.
//
// A sidecar's memory is mostly its copy of the cluster's table (~120 B of
// live heap per record: ~13 MB for 100 brokers × 1000 topics) plus what
// the Go runtime lets the heap grow to before it collects: with GOGC=100
// twice the live heap, and a sync's garbage lands in that headroom. A soft
// memory limit (runtime/debug.SetMemoryLimit, as GOMEMLIMIT) makes the
// collector run sooner as the process nears it.
//
// A fixed limit is only honest while the live heap plus a sync's working
// set fits under it: a table that outgrows it makes the collector run
// back to back whenever the agent allocates (the runtime caps that at
// about half a core, so the agent is slower, not dead). The table's size
// is not known in advance, so the default, "auto", follows the live heap:
// after every collection the limit is set to the runtime's own memory
// plus the live heap plus a headroom of a quarter of it (at least 4 MiB).
// That is GOGC=25 with a floor: the collector runs after each quarter of
// the live heap is allocated, which costs CPU only while the agent
// allocates (a sync, a burst of changes); an idle agent allocates little.
//
// The floor sets what a small table pays in collections while it
// allocates: a lower floor means more collections, and more CPU during a
// sync, for a few MB less RSS (docs/bench/history.md has the figures).
//
// Nor does auto set a limit under MinLimit (24 MiB of the runtime's
// memory, ~37 MB RSS with the binary's own pages): below it the collector
// runs by GOGC alone, as it would without a limit. A joiner's live heap
// grows from ~2 to ~14 MB while it syncs 100,100 records, and with the
// limit 4 MiB above it the collector ran every 4 MiB of the sync's ~44 MB
// of allocation, 25-30 times, nearly without pause: its write barriers and
// assists slowed the merge as much as the marking itself cost. Under the
// floor the same sync collects 13-18 times; what the process may hold is
// still bounded by it (the 40 MB goal of a sidecar holding that table),
// and a larger table's limit follows its live heap as before.
package memlimit

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
)

// Default is --memory-limit's default.
const Default = "auto"

// MinHeadroom is the least headroom "auto" leaves above the live heap.
const MinHeadroom = 4 << 20

// MinLimit is the least limit "auto" sets.
const MinLimit = 24 << 20

// Parse reads a --memory-limit value: "auto", "off", or a size with an
// optional unit (B, KiB, MiB, GiB; KB, MB, GB as their binary multiples,
// as GOMEMLIMIT spells them). It returns the fixed limit in bytes, 0 for
// auto and math.MaxInt64 (the runtime's "no limit") for off.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	switch t {
	case "auto":
		return 0, nil
	case "off":
		return math.MaxInt64, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("--memory-limit %q: use auto, off, or a size such as 64MiB", s)
	}
	if n*mult < 16<<20 {
		return 0, fmt.Errorf("--memory-limit %q is under 16MiB: the runtime and an empty agent take ~14 MB (use auto or off)", s)
	}
	return n * mult, nil
}

// Apply sets this process's memory limit as spec says. An empty spec is
// the default: GOMEMLIMIT from the environment if set (the runtime
// applied it at start), else Default. It describes the limit in force;
// stop ends an auto limit's following of the heap (and leaves the last
// limit set). Agents embedded in a larger program never call it: the
// limit is the whole process's.
func Apply(spec string) (desc string, stop func(), err error) {
	stop = func() {}
	if spec == "" {
		if os.Getenv("GOMEMLIMIT") != "" {
			return fmt.Sprintf("%d bytes (GOMEMLIMIT)", debug.SetMemoryLimit(-1)), stop, nil
		}
		spec = Default
	}
	limit, err := Parse(spec)
	switch {
	case err != nil:
		return "", stop, err
	case limit == math.MaxInt64:
		debug.SetMemoryLimit(limit)
		return "off", stop, nil
	case limit > 0:
		debug.SetMemoryLimit(limit)
		return fmt.Sprintf("%d bytes", limit), stop, nil
	}
	var stopped atomic.Bool
	follow(&stopped)
	return "auto: live heap + max(4 MiB, live/4), at least 24 MiB", func() { stopped.Store(true) }, nil
}

// sentinel is garbage at once; its finalizer runs after the collection
// that found it, which is when the live heap is known.
type sentinel struct{ _ [16]byte }

// follow sets the auto limit now and again after every collection.
func follow(stopped *atomic.Bool) {
	debug.SetMemoryLimit(AutoLimit())
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if !stopped.Load() {
			follow(stopped)
		}
	})
}

var autoSamples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
}

// AutoLimit is the limit "auto" sets now: the runtime's memory other than
// the heap (stacks, metadata), the live heap of the last collection, and
// the headroom; at least MinLimit.
func AutoLimit() int64 {
	s := make([]metrics.Sample, len(autoSamples))
	copy(s, autoSamples)
	metrics.Read(s)
	v := func(i int) int64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(s[i].Value.Uint64())
	}
	live := v(0)
	other := max(0, v(1)-v(2)-v(3)-v(4)-v(5))
	return autoLimit(other, live)
}

func autoLimit(other, live int64) int64 {
	return max(MinLimit, other+live+max(MinHeadroom, live/4))
}
