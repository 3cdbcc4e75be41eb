package bench

import (
	"bytes"
	"sync"
	"time"
)

// detection splits P6's crash row at the first suspicion. A crash is gone
// everywhere after crash → first suspicion (until some member's probe of
// the dead member fails: memberlist's probe schedule, the same for both
// systems, and the widest-spread part) and first suspicion → gone
// everywhere (the suspicion timeout, the spread of the verdict, and what
// each system does on it). With a handful of crashes the first part's luck
// decides the total; the second part is where a system adds its own delay.
//
// It is the memberlist log output of every simulated member: the prober
// logs "Suspect <name> has failed" when it suspects, and time.Now() at the
// write is the bubble's virtual time.
type detection struct {
	mu     sync.Mutex
	victim []byte // "Suspect <name> " while a crash is timed
	at     time.Time
}

var suspectLine = []byte("Suspect ")

// arm starts timing the suspicion of member name.
func (d *detection) arm(name string) {
	d.mu.Lock()
	d.victim, d.at = []byte("Suspect "+name+" "), time.Time{}
	d.mu.Unlock()
}

// first is when the member armed for was first suspected (zero if not
// yet), and disarms.
func (d *detection) first() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.victim = nil
	return d.at
}

func (d *detection) Write(b []byte) (int, error) {
	if bytes.Contains(b, suspectLine) {
		d.mu.Lock()
		if d.victim != nil && d.at.IsZero() && bytes.Contains(b, d.victim) {
			d.at = time.Now()
		}
		d.mu.Unlock()
	}
	return len(b), nil
}
