package agent

import (
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// TTLCount is the number of registrations with a pending TTL deadline, for
// tests outside the package that check it stays bounded.
func TTLCount(a *Agent) int {
	a.ttl.mu.Lock()
	defer a.ttl.mu.Unlock()
	return len(a.ttl.deadlines)
}

// SavedLeases reads what a restart with data dir dir would restore: the
// records of every saved lease, by lease id.
func SavedLeases(dir string) (map[string][]routes.Record, error) { return lease.SavedRecords(dir) }
