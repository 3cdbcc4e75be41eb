package gossiptest

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/internal/testutil"
)

// Inside a synctest bubble the clock only moves when every goroutine is
// blocked, so memberlist runs with its stock LAN timings, seconds-long
// suspicion included, in milliseconds of real time, and a starved CPU can
// never make a deadline pass early.
func TestClusterPartitionWithLANTimingsInSynctest(t *testing.T) {
	testutil.CheckLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		c := startCluster(t, 5, clusterSpec{
			seed: 6,
			config: func(tr *Transport, logs *logCapture) *memberlist.Config {
				conf := memberlist.DefaultLANConfig()
				conf.Name, conf.Transport, conf.LogOutput = tr.Name(), tr, logs
				return conf
			},
			drain: time.Minute, // of fake time
		})
		all := names(0, 1, 2, 3, 4)
		testutil.Eventually(t, time.Minute, func() error { return c.sees(all, c.all()...) })

		start := time.Now()
		c.net.Partition(names(0, 1), names(2, 3, 4))
		testutil.Eventually(t, time.Minute, func() error {
			if err := c.sees(names(0, 1), 0, 1); err != nil {
				return err
			}
			return c.sees(names(2, 3, 4), 2, 3, 4)
		})
		t.Logf("partition detected after %v of protocol time", time.Since(start))

		c.net.Heal()
		c.join(t, 0, 2)
		testutil.Eventually(t, time.Minute, func() error { return c.sees(all, c.all()...) })
	})
}
