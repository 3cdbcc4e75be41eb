package consul

import (
	"sync"

	"github.com/namecast/namecast/agent/consul/catalog"
)

// The answers that read every record (the service list, every check) are
// computed once per change of the table and shared: every blocking query
// on them wakes at the same change, and N watchers (Prometheus, Traefik,
// each Spring Cloud client) would otherwise each read the whole table.
type wholeCache struct {
	mu    sync.Mutex
	index uint64 // the table's index the values were read at; 0: none
	names map[string][]string
	all   []catalog.Instance
}

// whole is every service's tags and every instance, as of the table's
// index now. Callers must not change what they are given.
func (s *Server) whole() (map[string][]string, []catalog.Instance, uint64) {
	c := &s.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	idx := s.table.IndexOf(catalog.WatchNames)
	if c.index != idx || c.names == nil {
		// Read after the index: a change in between moves the index
		// again, so the next caller reads afresh.
		c.names, c.all, c.index = catalog.Names(s.table), catalog.All(s.table), idx
	}
	return c.names, c.all, idx
}
