package routes

import (
	"context"
	"sync"
)

// watcher is the table's index: a counter that grows on every visible change
// and a channel closed (then replaced) on each growth, so any number of
// waiters wake without a goroutine per waiter inside the table.
type watcher struct {
	mu      sync.Mutex
	index   uint64
	changed chan struct{}
}

func (w *watcher) init() {
	w.index = 1
	w.changed = make(chan struct{})
}

func (w *watcher) bump() {
	w.mu.Lock()
	w.index++
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

func (w *watcher) current() (uint64, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.index, w.changed
}

// Index is the table's current index. It starts at 1, so a blocking query
// with index 0 returns at once.
func (t *Table) Index() uint64 {
	i, _ := t.watch.current()
	return i
}

// Wait blocks until the index is greater than after or ctx is done, and
// returns the index then.
func (t *Table) Wait(ctx context.Context, after uint64) uint64 {
	for {
		i, ch := t.watch.current()
		if i > after {
			return i
		}
		select {
		case <-ch:
		case <-ctx.Done():
			i, _ := t.watch.current()
			return i
		}
	}
}

// Touch grows the index for a change outside the table that queries can
// see, such as membership, so blocking queries on those wake too.
func (t *Table) Touch() { t.watch.bump() }
