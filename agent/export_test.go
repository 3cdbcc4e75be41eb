package agent

import (
	"errors"
	"log/slog"

	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/routes"
)

// TTLCount is the number of registrations with a pending TTL deadline, for
// tests outside the package that check it stays bounded.
func TTLCount(a *Agent) int { return Door[*httpapi.Server](a).PendingTTLs() }

// SavedLeases reads what a restart with data dir dir would restore: the
// records of every saved lease, by lease id.
func SavedLeases(dir string) (map[string][]routes.Record, error) { return lease.SavedRecords(dir) }

// SavedRules reads what a restart with data dir dir would restore of the
// cluster-scoped rules (rules.json, then rules.log), by key.
func SavedRules(dir string) (map[string]routes.Record, error) {
	s := &rulesStore{dir: dir, logger: slog.New(slog.DiscardHandler), table: routes.NewTable("reader", 1)}
	if err := s.read(); err != nil {
		return nil, err
	}
	out := map[string]routes.Record{}
	for _, r := range s.table.Rules() {
		out[r.Key] = r.Record
	}
	return out, nil
}

// BreakRulesLog makes every later rule write fail to save, as a full disk
// would.
func BreakRulesLog(a *Agent) { a.rules.log.FailWrites(errors.New("injected: no space left on device")) }

// BreakLeaseLog makes every later lease write fail to save, as a full
// disk would, until heal is called.
func BreakLeaseLog(a *Agent) (heal func()) { return a.leases.FailWritesForTest() }

// FailRulesFsync makes every fsync of a's rules.log fail until the
// returned func is called.
func FailRulesFsync(a *Agent) (restore func()) {
	return a.rules.log.FailSyncs(errors.New("injected: fsync failed"))
}
