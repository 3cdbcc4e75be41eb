package client

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/namecast/namecast/dubbo"
)

// subscription is one (URL, listener) pair and what its listener has been
// told. Watches offer it lists as they change; its own goroutine (deliver)
// tells the listener what differs from the last call, one call at a time.
// Only the latest list of a stream matters (each notification is
// complete), so a burst of changes to one list costs one call.
type subscription struct {
	url      dubbo.URL
	listener NotifyListener
	cats     []string
	wildcard bool                    // interface "*": a stream per interface and category
	watches  map[watchKey]*listWatch // guarded by Registry.mu

	mu        sync.Mutex
	latest    map[watchKey][]string // what the listener should hold, per stream
	delivered map[watchKey][]string // what it was last told
	gone      map[watchKey]bool     // streams of vanished interfaces: forgotten once their empty:// is told
	started   bool                  // the first notification is done
	stopped   bool
	signal    chan struct{} // a stream changed
	done      chan struct{} // closed by stop
}

// offerLocked hands s the list w now holds. r.mu must be held.
func (r *Registry) offerLocked(s *subscription, w *listWatch) {
	if w.key == servicesKey {
		r.followServicesLocked(s, w.list)
		return
	}
	list := s.filter(w.key, w.parsed)
	s.mu.Lock()
	s.latest[w.key] = list
	delete(s.gone, w.key)
	s.mu.Unlock()
	poke(s.signal)
}

// followServicesLocked keeps a "*" subscription on one watch per interface
// and category. An interface that vanished ends with one empty:// per
// category it had told the listener about, so no stale list stays behind.
// r.mu must be held.
func (r *Registry) followServicesLocked(s *subscription, services []string) {
	want := make(map[string]bool, len(services))
	for _, iface := range services {
		want[iface] = true
		for _, c := range s.cats {
			r.attachLocked(s, watchKey{iface, c})
		}
	}
	for k := range s.watches {
		if k != servicesKey && !want[k.iface] {
			r.detachLocked(s, k)
		}
	}
	s.mu.Lock()
	for k := range s.latest {
		if !want[k.iface] {
			s.vanishLocked(k)
		}
	}
	s.mu.Unlock()
	poke(s.signal)
}

// vanishLocked retires stream k. s.mu must be held.
func (s *subscription) vanishLocked(k watchKey) {
	if told, ok := s.delivered[k]; ok && !isEmptyList(told) {
		s.latest[k] = []string{s.emptyURL(k)}
		s.gone[k] = true
		return
	}
	delete(s.latest, k)
	delete(s.delivered, k)
	delete(s.gone, k)
}

// filter is what stream k tells the listener when the agent lists parsed:
// the URLs dubbo.Match selects, else the one empty:// URL.
func (s *subscription) filter(k watchKey, parsed []dubbo.URL) []string {
	var out []string
	for _, u := range parsed {
		if dubbo.Match(s.url, u) {
			out = append(out, u.String())
		}
	}
	if len(out) == 0 {
		return []string{s.emptyURL(k)}
	}
	return out
}

// emptyURL is Dubbo's empty:// for stream k; under "*" it names the
// interface, as Dubbo's ZooKeeper registry does for each service it finds.
func (s *subscription) emptyURL(k watchKey) string {
	sub := s.url
	if s.wildcard {
		sub = sub.WithParam(dubbo.KeyInterface, k.iface)
	}
	return dubbo.Empty(sub, k.category).String()
}

func isEmptyList(l []string) bool {
	return len(l) == 1 && strings.HasPrefix(l[0], dubbo.EmptyProtocol+"://")
}

// firstBatch builds the first notification: one list per stream, in
// order, all of them or none. With useCache, streams the agent has not
// answered come from the cache file (cached reports that). It marks s
// started, after which deliver sends only changes.
func (r *Registry) firstBatch(s *subscription, useCache bool) (batch [][]string, cached, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys, cached, ok := r.streamsLocked(s, useCache)
	if !ok {
		return nil, false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.stopped {
		return nil, false, false
	}
	for _, k := range keys {
		l, have := s.latest[k]
		if !have && useCache {
			if urls, hit := r.cache.get(k); hit {
				l, have, cached = s.filter(k, r.parseAll(urls)), true, true
			}
		}
		if !have {
			return nil, false, false
		}
		batch = append(batch, l)
	}
	for i, k := range keys {
		s.latest[k], s.delivered[k] = batch[i], batch[i]
	}
	if len(keys) == 0 {
		// "*" and no services at all: still one notification per category.
		for _, c := range s.cats {
			batch = append(batch, []string{dubbo.Empty(s.url, c).String()})
		}
	}
	s.started = true
	return batch, cached, true
}

// streamsLocked lists the streams of s in notification order: its
// categories, and for "*" those of every interface the agent (or, with
// useCache, the cache file) knows. r.mu must be held.
func (r *Registry) streamsLocked(s *subscription, useCache bool) (keys []watchKey, cached, ok bool) {
	ifaces := []string{s.url.Interface()}
	if s.wildcard {
		if w := s.watches[servicesKey]; w != nil && w.known {
			ifaces = w.list
		} else if cachedIfaces := r.cache.interfaces(); useCache && len(cachedIfaces) > 0 {
			ifaces, cached = cachedIfaces, true
		} else {
			return nil, false, false
		}
	}
	for _, iface := range ifaces {
		for _, c := range s.cats {
			keys = append(keys, watchKey{iface, c})
		}
	}
	return keys, cached, true
}

// deliver is the subscription's goroutine: the first notification if
// Subscribe could not give it, then every change, until the subscription
// or the registry ends.
func (r *Registry) deliver(s *subscription) {
	for {
		if !s.isStarted() {
			if batch, _, ok := r.firstBatch(s, false); ok {
				s.notify(r.ctx, batch)
			}
		}
		for batch := s.changes(); len(batch) > 0; batch = s.changes() {
			s.notify(r.ctx, batch)
		}
		select {
		case <-r.ctx.Done():
			return
		case <-s.done:
			return
		case <-s.signal:
		}
	}
}

// changes takes the streams whose latest list the listener has not been
// told, in notification order, and counts them as told.
func (s *subscription) changes() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.stopped {
		return nil
	}
	var keys []watchKey
	for k, l := range s.latest {
		if !slices.Equal(l, s.delivered[k]) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareKeys(s.cats))
	batch := make([][]string, 0, len(keys))
	for _, k := range keys {
		batch = append(batch, s.latest[k])
		s.delivered[k] = s.latest[k]
		if s.gone[k] {
			delete(s.latest, k)
			delete(s.delivered, k)
			delete(s.gone, k)
		}
	}
	return batch
}

// notify calls the listener once per list, each with its own copy, and
// stops early once the subscription or the registry ends.
func (s *subscription) notify(ctx context.Context, batch [][]string) {
	for _, l := range batch {
		if ctx.Err() != nil || s.isStopped() {
			return
		}
		s.listener.Notify(slices.Clone(l))
	}
}

func (s *subscription) isStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

func (s *subscription) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

func (s *subscription) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		s.stopped = true
		close(s.done)
	}
}

// compareKeys orders streams by interface, then by the subscription's
// category order.
func compareKeys(cats []string) func(a, b watchKey) int {
	return func(a, b watchKey) int {
		if c := strings.Compare(a.iface, b.iface); c != 0 {
			return c
		}
		if c := cmp.Compare(slices.Index(cats, a.category), slices.Index(cats, b.category)); c != 0 {
			return c
		}
		return strings.Compare(a.category, b.category)
	}
}
