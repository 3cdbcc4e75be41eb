package rocketmq

import (
	"sync"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
)

const (
	// routeCacheTTL bounds how long an encoded route is reused while the
	// table does not change: the nearest-first broker order follows RTT
	// estimates, which move without the table's index moving.
	routeCacheTTL = 2 * time.Second
	// routeCacheMax bounds the entries; past it the cache starts over, so
	// clients asking for endless made-up topics cannot grow it.
	routeCacheMax = 16384
)

type routeKey struct {
	topic string
	form  remoting.JSONForm
}

// cachedRoute is one encoded answer, shared read-only by every connection:
// a route body, or (body nil) Java's TOPIC_NOT_EXIST remark.
type cachedRoute struct {
	body   []byte
	remark string
}

// routeCache holds GET_ROUTEINFO_BY_TOPIC answers for one table index. A
// query that hits it costs a map lookup and a copy of the bytes into the
// connection's write buffer.
type routeCache struct {
	mu      sync.RWMutex
	index   uint64
	born    time.Time
	entries map[routeKey]*cachedRoute
}

func (rc *routeCache) get(k routeKey, index uint64, now time.Time) *cachedRoute {
	rc.mu.RLock()
	defer rc.mu.RUnlock()
	if rc.index != index || now.Sub(rc.born) > routeCacheTTL {
		return nil
	}
	return rc.entries[k]
}

// put stores an answer computed from the table at index (read before the
// route was), so an entry never holds data older than its index says.
func (rc *routeCache) put(k routeKey, index uint64, now time.Time, e *cachedRoute) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if index < rc.index {
		return
	}
	if index > rc.index || now.Sub(rc.born) > routeCacheTTL || len(rc.entries) >= routeCacheMax {
		rc.index, rc.born, rc.entries = index, now, map[routeKey]*cachedRoute{}
	}
	rc.entries[k] = e
}

// clear drops every entry, for option changes the index does not see.
func (rc *routeCache) clear() {
	rc.mu.Lock()
	rc.index, rc.entries = 0, nil
	rc.mu.Unlock()
}
