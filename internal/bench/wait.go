package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Waiting for setup conditions. Nothing here is measured: measured waits
// use the tables' change signal or the event channels (arrivals.go).

// A member that missed another's alive message learns of it only at the
// next push/pull, up to PushPullInterval scaled by N (60 s at N=50, 120 s
// at N=200). So a member that lacks only a few others after nudgeAfter
// joins them itself, and that one push/pull tells both sides; at most
// maxNudges a round. Anything more is a cluster still forming, or a
// machine too busy to run it, where joining wholesale would only add load.
const (
	nudgeAfter  = 15 * time.Second
	nudgeAtMost = 3 // members missing from one view
	maxNudges   = 10
)

// laggard is a member that does not see all the others yet. missing, which
// lists the gossip addresses it lacks, is only called when a nudge is due:
// at 200 members, listing every view at every poll would steal the CPU
// the cluster needs to form.
type laggard struct {
	missing func() []string
	join    func(addrs []string)
}

// waitMembers polls lagging every 250 ms until it returns nobody, nudging
// as above, for at most two minutes.
func waitMembers(ctx context.Context, lagging func() []laggard) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	next := time.Now().Add(nudgeAfter)
	for {
		l := lagging()
		if len(l) == 0 {
			return nil
		}
		if time.Now().After(next) {
			done := 0
			for _, lg := range l {
				if done == maxNudges {
					break
				}
				if m := lg.missing(); len(m) > 0 && len(m) <= nudgeAtMost {
					lg.join(m)
					done++
				}
			}
			next = time.Now().Add(nudgeAfter)
		}
		select {
		case <-ctx.Done():
			most := 0
			for _, lg := range l {
				most = max(most, len(lg.missing()))
			}
			return fmt.Errorf("%d members still do not see every other after 2m (the worst lacks %d)", len(l), most)
		case <-tick.C:
		}
	}
}

// poll checks cond every 50 ms until it holds or timeout passes.
func poll(ctx context.Context, timeout time.Duration, cond func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("not reached within %v", timeout), err)
		case <-tick.C:
		}
	}
}

// SettledRate is the mean send rate per member, in bytes/s, under which a
// cluster counts as quiet: a few times the idle rate of the lan and fast
// profiles (about 350 and 900 B/s), far under a cluster that is spreading
// the news of a join.
const SettledRate = 1500

// Settle waits until the members' mean send rate over half a second is
// under perMember bytes/s, or until limit. A cluster that has just formed
// or changed is still gossiping the news of it; memberlist sends its own
// messages before user ones, so a trial started then would be measured
// behind that queue. It reports whether the rate did fall.
func Settle(ctx context.Context, ts []*CountingTransport, perMember float64, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		tr := StartTraffic(ts)
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
		var sum float64
		for _, r := range tr.PerMember() {
			sum += r
		}
		if sum/float64(len(ts)) < perMember {
			return true
		}
	}
	return false
}
