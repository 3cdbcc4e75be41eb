package routes

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

func url(iface, category, u string) Record {
	return Record{URL: &URL{Interface: iface, Category: category, URL: u}}
}

// unrelated returns n records whose watch keys share no slot with w: with
// slots hashed from a random seed, a key in a watched slot would wake the
// watch by design (see watch.go), and the test must not depend on the seed.
func unrelated(t *Table, w Watch, n int) []Record {
	taken := map[uint64]bool{}
	for _, k := range append(w, WatchTopics[0], WatchServices[0]) {
		taken[t.watch.slot(k)] = true
	}
	var out []Record
	for i := 0; len(out) < n; i++ {
		topic, broker := fmt.Sprintf("other-%d", i), fmt.Sprintf("ob-%d", i)
		if !taken[t.watch.slot(topicKey(topic))] && !taken[t.watch.slot(brokerKey(broker))] {
			out = append(out, queue(broker, topic, 4))
		}
	}
	return out
}

// sharesSlot reports whether key shares a slot with any of w's keys.
// Slots only grow, so keys apart now stay apart.
func sharesSlot(t *Table, key string, w Watch) bool {
	for _, k := range w {
		if t.watch.slot(k) == t.watch.slot(key) {
			return true
		}
	}
	return false
}

// A view's index is the index of its last change; changes elsewhere leave
// it, and its waiters, alone.
func TestViewIndexMovesOnlyForItsView(t *testing.T) {
	// Every new topic moves the topic list: a table whose seed puts that
	// list in a slot of the watched views would move them too (Consul's
	// "maybe changed"), so the test takes a table where it does not.
	var a, b *Table
	var topic, svc Watch
	for {
		a, b = NewTable("a", 1), NewTable("b", 1)
		d, _ := a.ApplyLocal([]Record{broker("c", "b1", 0, "10.0.0.1:1"), queue("b1", "T", 4),
			url("com.S", "providers", "dubbo://10.0.0.1:2/com.S")}, nil)
		b.Apply(d)
		topic, svc = b.WatchTopicRoute("T"), WatchService("com.S", "providers")
		if !sharesSlot(b, WatchTopics[0], append(topic, svc...)) {
			break
		}
	}
	if len(topic) != 2 {
		t.Fatalf("route watch %q, want the topic and its broker", topic)
	}
	seen := b.IndexOf(topic)
	if seen != b.Index() || b.IndexOf(svc) != b.Index() {
		t.Fatalf("after one change: topic %d, service %d, table %d", seen, b.IndexOf(svc), b.Index())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	woke := make(chan uint64, 1)
	go func() { woke <- b.WaitFor(ctx, topic, seen) }()

	others := unrelated(b, append(topic, svc...), 200)
	for i, r := range others {
		d, _ := a.ApplyLocal([]Record{r}, nil)
		b.Apply(d)
		if i%2 == 0 {
			d, _ = a.ApplyLocal(nil, []string{r.Key()})
			b.Apply(d)
		}
	}
	if got := b.IndexOf(topic); got != seen {
		t.Fatalf("topic's index moved from %d to %d for unrelated changes", seen, got)
	}
	if got := b.IndexOf(svc); got != seen {
		t.Fatalf("service's index moved from %d to %d for unrelated changes", seen, got)
	}
	if b.IndexOf(WatchTopics) <= seen || b.Index() <= seen {
		t.Fatalf("the topic list (%d) and the table (%d) must have moved past %d", b.IndexOf(WatchTopics), b.Index(), seen)
	}
	select {
	case i := <-woke:
		t.Fatalf("the topic's watch woke at %d for unrelated changes", i)
	default:
	}

	// The broker's address is part of the route: the watch wakes, with
	// the index of that change.
	d, _ := a.ApplyLocal([]Record{broker("c", "b1", 0, "10.0.0.9:1")}, nil)
	b.Apply(d)
	select {
	case i := <-woke:
		if i != b.Index() {
			t.Fatalf("woke at %d, want the change's index %d", i, b.Index())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the topic's watch did not wake when its broker moved")
	}
	// A URL of another category of the same interface leaves providers
	// alone; a provider wakes it.
	seen = b.IndexOf(svc)
	d, _ = a.ApplyLocal([]Record{url("com.S", "consumers", "consumer://10.0.0.5/com.S")}, nil)
	b.Apply(d)
	if got := b.IndexOf(svc); got != seen && b.watch.slot(urlsKey("com.S", "consumers")) != b.watch.slot(svc[0]) {
		t.Fatalf("providers' index moved from %d to %d for a consumer", seen, got)
	}
	d, _ = a.ApplyLocal(nil, []string{URLKey("com.S", "providers", "dubbo://10.0.0.1:2/com.S")})
	b.Apply(d)
	if got := b.IndexOf(svc); got != b.Index() {
		t.Fatalf("providers' index %d after its provider left, want %d", got, b.Index())
	}
}

// A waiter on a topic nobody serves yet wakes when it appears, and an
// origin's death wakes the views of its records.
func TestWaitForWakesOnAppearAndDrop(t *testing.T) {
	a, b := NewTable("a", 1), NewTable("b", 1)
	w := b.WatchTopicRoute("New")
	after := b.IndexOf(w)
	woke := make(chan uint64, 1)
	go func() { woke <- b.WaitFor(context.Background(), w, after) }()
	d, _ := a.ApplyLocal([]Record{broker("c", "nb", 0, "10.0.0.1:1"), queue("nb", "New", 4)}, nil)
	b.Apply(d)
	if i := <-woke; i <= after {
		t.Fatalf("woke at %d, not past %d", i, after)
	}
	w = b.WatchTopicRoute("New")
	after = b.IndexOf(w)
	go func() { woke <- b.WaitFor(context.Background(), w, after) }()
	b.DropOrigin("a", 1)
	if i := <-woke; i <= after {
		t.Fatalf("woke at %d after the drop, not past %d", i, after)
	}
	// A wait that ends with its context answers the view's index.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if got := b.WaitFor(ctx, w, b.IndexOf(w)); got != b.IndexOf(w) {
		t.Fatalf("timed-out wait answered %d, want %d", got, b.IndexOf(w))
	}
}

// The slots grow with the table's names. Growth must move no view's index
// (a client blocking on one would return for nothing, or worse, see it go
// down) and must not strand a waiter on a slot number that now means
// another set of keys.
func TestSlotsGrowWithoutMovingIndexesOrStrandingWaiters(t *testing.T) {
	tab := NewTable("a", 1)
	if n := len(tab.watch.slots); n != minSlots {
		t.Fatalf("an empty table has %d slots, want %d", n, minSlots)
	}
	var recs []Record
	for i := range 40 {
		recs = append(recs, queue(fmt.Sprintf("b%d", i), fmt.Sprintf("T%d", i), 4))
	}
	tab.ApplyLocal(recs, nil)
	w := tab.WatchTopicRoute("T0")
	after := tab.IndexOf(w)

	// White-box: every key's index, before and after a growth on its own.
	var keys []string
	for i := range 40 {
		keys = append(keys, topicKey(fmt.Sprintf("T%d", i)), brokerKey(fmt.Sprintf("b%d", i)))
	}
	before := map[string]uint64{}
	for _, k := range keys {
		before[k] = tab.IndexOf(Watch{k})
	}
	woke := make(chan uint64, 1)
	go func() { woke <- tab.WaitFor(context.Background(), w, after) }()
	waitForWaiter(t, tab)
	n := len(tab.watch.slots)
	tab.mu.Lock()
	tab.watch.mu.Lock()
	tab.watch.keys = func() int { return 1000 }
	tab.watch.grow()
	tab.watch.keys = tab.views.keyCount
	tab.watch.mu.Unlock()
	tab.mu.Unlock()
	if len(tab.watch.slots) <= n {
		t.Fatalf("slots did not grow from %d for 1,000 keys", n)
	}
	for _, k := range keys {
		if got := tab.IndexOf(Watch{k}); got != before[k] {
			t.Fatalf("%q's index went %d -> %d when the slots grew", k, before[k], got)
		}
	}
	// Growth woke the waiter (its slot numbers changed); once it is
	// waiting again it has not returned.
	waitForWaiter(t, tab)
	select {
	case i := <-woke:
		t.Fatalf("the waiter returned at %d (asked after %d) for a growth", i, after)
	default:
	}
	// Its topic changes: the waiter, now on the new slots, wakes.
	tab.ApplyLocal([]Record{queue("b0", "T0", 8)}, nil)
	select {
	case i := <-woke:
		if i <= after || i != tab.IndexOf(w) {
			t.Fatalf("woke at %d, asked after %d, view at %d", i, after, tab.IndexOf(w))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not wake for its own topic after the slots grew")
	}

	// Through the write path: thousands of names reach the cap.
	recs = recs[:0]
	for i := range 3000 {
		recs = append(recs, queue(fmt.Sprintf("ob%d", i), fmt.Sprintf("O%d", i), 4))
	}
	tab.ApplyLocal(recs, nil)
	if got := len(tab.watch.slots); got != maxSlots {
		t.Fatalf("%d slots for 6,080 keys, want the cap %d", got, maxSlots)
	}
}

// waitForWaiter polls until a WaitFor is waiting on its slots.
func waitForWaiter(t *testing.T, tab *Table) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() error {
		tab.watch.mu.Lock()
		defer tab.watch.mu.Unlock()
		if len(tab.watch.waiters) == 0 {
			return errors.New("no waiter registered")
		}
		return nil
	})
}

// WatchOf lists every key a change to r can mark: the views it appears in,
// and the topic or service list it may join or leave.
func WatchOf(r Record) Watch {
	switch {
	case r.Broker != nil:
		return Watch{brokerKey(r.Broker.Name), WatchClusters[0]}
	case r.Queue != nil:
		return Watch{topicKey(r.Queue.Topic), WatchTopics[0]}
	case r.URL != nil:
		return Watch{urlsKey(r.URL.Interface, r.URL.Category), serviceKey(r.URL.Interface), WatchServices[0]}
	case r.Mapping != nil:
		return Watch{topicKey(r.Mapping.Topic)}
	case r.Znode != nil:
		return watchOfZnode(r.Znode)
	}
	return nil
}

// watchOfZnode lists every key a change to z can mark.
func watchOfZnode(z *Znode) Watch {
	switch kind, a, _ := classifyAppPath(z.Path); kind {
	case instancePath:
		return Watch{appKey(a), WatchApps[0]}
	case mappingPath:
		w := Watch{WatchApps[0], appsOfKey(a)}
		for _, n := range mappingNames(z.Data) {
			w = append(w, appKey(n))
		}
		return w
	case metadataPath:
		return Watch{appKey(a)}
	}
	return nil
}
