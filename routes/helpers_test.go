package routes

import "time"

// Test-only accessors of the table.

// Retired counts the records of origin's previous incarnation still served.
func (t *Table) Retired(origin string) int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if st, ok := t.origins[origin]; ok {
		return len(st.retired)
	}
	return 0
}

// SetClock replaces the time source tombstones are stamped with.
func (t *Table) SetClock(now func() time.Time) {
	t.mu.Lock()
	t.now = now
	t.mu.Unlock()
}
