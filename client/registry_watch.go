package client

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/namecast/namecast/dubbo"
)

// watchKey names one list the agent serves: the URLs of one interface in
// one category, or, for servicesKey, the interfaces themselves. It also
// names one notification stream of a subscription.
type watchKey struct{ iface, category string }

// servicesKey is the watch of GET /v1/services, which interface "*" needs.
var servicesKey = watchKey{}

// listWatch follows one list with blocking queries on the local agent. All
// subscriptions that need the list share it; it stops when the last one
// leaves.
type listWatch struct {
	key    watchKey
	stop   context.CancelFunc
	kicked atomic.Bool // restart from index 0; see kickWatches

	// Guarded by Registry.mu.
	subs      map[*subscription]struct{}
	ready     chan struct{} // closed at the first answer or failure, or at stop
	isReady   bool
	known     bool        // list holds an answer from the agent
	list      []string    // sorted, as the agent answers
	parsed    []dubbo.URL // list parsed (URL watches only)
	failed    bool        // the last query failed
	err       error       // and why
	cancelReq context.CancelFunc
}

func (w *listWatch) markReadyLocked() {
	if !w.isReady {
		w.isReady = true
		close(w.ready)
	}
}

// attachLocked makes s follow key, starting a watch if none runs yet, and
// hands s what the watch already knows. r.mu must be held.
func (r *Registry) attachLocked(s *subscription, key watchKey) {
	if _, ok := s.watches[key]; ok {
		return
	}
	w := r.watches[key]
	if w == nil {
		ctx, cancel := context.WithCancel(r.ctx)
		w = &listWatch{key: key, stop: cancel, subs: map[*subscription]struct{}{}, ready: make(chan struct{})}
		if !r.goLocked(func() { r.runWatch(ctx, w) }) {
			cancel()
			return
		}
		r.watches[key] = w
	}
	w.subs[s] = struct{}{}
	s.watches[key] = w
	if w.known {
		r.offerLocked(s, w)
	}
}

// detachLocked stops s following key, and stops the watch once nobody
// follows it. r.mu must be held.
func (r *Registry) detachLocked(s *subscription, key watchKey) {
	w, ok := s.watches[key]
	if !ok {
		return
	}
	delete(s.watches, key)
	delete(w.subs, s)
	if len(w.subs) == 0 {
		w.stop()
		w.markReadyLocked() // nobody may wait on a watch that will never answer
		delete(r.watches, key)
	}
}

// kickWatches makes every watch drop its index and ask again at once: the
// agent restarted and its index started over.
func (r *Registry) kickWatches() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.watches {
		w.kicked.Store(true)
		if w.cancelReq != nil {
			w.cancelReq()
		}
	}
}

// runWatch is one watch's loop: a blocking query that returns when the
// agent's index passes the last answer's, then hands a changed list to the
// subscriptions. After a failure it waits (doubling up to RetryPeriod) and
// asks again from index 0, so the answer after an outage is always heard.
func (r *Registry) runWatch(ctx context.Context, w *listWatch) {
	var index uint64
	wait := min(r.c.backoffMin, r.opts.RetryPeriod)
	for {
		if w.kicked.Swap(false) {
			index = 0
		}
		reqCtx, cancel := context.WithCancel(ctx)
		r.mu.Lock()
		w.cancelReq = cancel
		r.mu.Unlock()
		list, meta, err := r.fetch(reqCtx, w.key, &QueryOptions{WaitIndex: index, WaitTime: r.c.watchWait})
		cancel()
		if ctx.Err() != nil {
			return
		}
		if w.kicked.Load() {
			continue
		}
		if err != nil {
			r.watchFailed(w, err)
			index = 0
			if !sleep(ctx, wait) {
				return
			}
			wait = r.nextBackoff(wait)
			continue
		}
		wait = min(r.c.backoffMin, r.opts.RetryPeriod)
		if r.watchAnswered(w, list) {
			r.replay()
		}
		index = nextIndex(index, meta)
		// A query without an index does not block: pace the loop rather
		// than spin on an agent that never passes the index.
		if index == 0 && !sleep(ctx, r.c.backoffMin) {
			return
		}
	}
}

// nextIndex is the index to block on after an answer. An answer that did
// not pass the index asked for came back without a change: the wait ran
// out, or the agent answered its blocked queries as it shut down. The agent
// may since have restarted with its index started over, below ours, and a
// query blocking on ours would hang until its wait; so the next query is a
// plain one, which reads whichever agent answers at once.
func nextIndex(asked uint64, meta *QueryMeta) uint64 {
	if asked != 0 && meta.LastIndex <= asked {
		return 0
	}
	return meta.LastIndex
}

// fetch reads the list key names. An interface nobody registered is an
// empty list, not a failure.
func (r *Registry) fetch(ctx context.Context, key watchKey, q *QueryOptions) ([]string, *QueryMeta, error) {
	if key == servicesKey {
		return r.c.Services(ctx, q)
	}
	urls, meta, err := r.c.URLs(ctx, key.iface, key.category, q)
	if IsNotFound(err) && meta != nil {
		return nil, meta, nil
	}
	return urls, meta, err
}

func (r *Registry) watchFailed(w *listWatch, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !w.failed {
		r.log.Debug("watch failed; retrying", "interface", w.key.iface, "category", w.key.category, "err", err)
	}
	w.failed, w.err = true, err
	w.markReadyLocked()
}

// watchAnswered records an answer and offers a changed list to every
// subscriber. It reports whether the watch had failed before: the agent
// may have restarted, so the registrations are replayed.
func (r *Registry) watchAnswered(w *listWatch, list []string) (recovered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	recovered = w.failed
	w.failed, w.err = false, nil
	if !w.known || !slices.Equal(w.list, list) {
		w.known, w.list = true, list
		if w.key != servicesKey {
			w.parsed = r.parseAll(list)
			r.cache.put(w.key, list)
		}
		for s := range w.subs {
			r.offerLocked(s, w)
		}
	}
	w.markReadyLocked()
	return recovered
}

// parseAll parses what the agent or the cache file holds. The agent only
// stores URLs it parsed, so a failure means a damaged cache entry: skip it.
func (r *Registry) parseAll(list []string) []dubbo.URL {
	out := make([]dubbo.URL, 0, len(list))
	for _, s := range list {
		u, err := dubbo.Parse(s)
		if err != nil {
			r.log.Warn("skipping a URL that does not parse", "url", s, "err", err)
			continue
		}
		out = append(out, u)
	}
	return out
}
