package chaos

import (
	"math/rand/v2"
	"testing"
)

// Seed returns seed, or a random one when it is 0, and logs it; a failing
// test repeats it with the flag that replays the run.
func Seed(t testing.TB, seed int64, flagName string) int64 {
	t.Helper()
	if seed == 0 {
		seed = rand.Int64N(1<<53) + 1 // printable without loss as a float, too
	}
	t.Logf("chaos seed %d (replay with -%s=%d)", seed, flagName, seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED with chaos seed %d: replay with -run '^%s$' -%s=%d", seed, t.Name(), flagName, seed)
		}
	})
	return seed
}
