package gossip

import (
	"testing"
	"time"
)

// TestMembersSaySince: Members gives when each member took its status, so
// the web UI shows how long a dead member has been dead.
func TestMembersSaySince(t *testing.T) {
	g := newBare(t, "me")
	died := time.Now().Add(-90 * time.Second)
	g.members["peer"] = &member{addr: "192.0.2.1:7946", status: StatusDead, since: died}
	for _, m := range g.Members() {
		if m.Name == "peer" && (m.Status != StatusDead || !m.Since.Equal(died.UTC().Truncate(time.Millisecond))) {
			t.Errorf("peer: %+v, want dead since %v", m, died)
		}
	}
}
