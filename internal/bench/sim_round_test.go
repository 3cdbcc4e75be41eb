package bench

import (
	"testing"
	"time"
)

// P6's default idle window is memberlist's scaled push/pull interval
// (pushPullScale) at the sizes P6 runs.
func TestPushPullRoundIsMemberlistsScaledInterval(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{{20, 30 * time.Second}, {32, 30 * time.Second}, {33, 60 * time.Second}, {1000, 180 * time.Second}, {2000, 210 * time.Second}} {
		got, err := PushPullRound("lan", tc.n)
		if err != nil || got != tc.want {
			t.Errorf("N=%d: %v (%v), want %v", tc.n, got, err, tc.want)
		}
	}
	if _, err := PushPullRound("nope", 10); err == nil {
		t.Error("an unknown profile was accepted")
	}
}
