package bench

import "testing"

func TestSummarizeNearestRank(t *testing.T) {
	for _, tc := range []struct {
		in            []float64
		p50, p99, max float64
	}{
		{[]float64{3}, 3, 3, 3},
		{[]float64{5, 1, 4, 2, 3}, 3, 5, 5},
		// With 20 trials p99 is the worst one: nearest rank never
		// interpolates a value no trial had.
		{[]float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 9}, 1, 9, 9},
	} {
		s := Summarize(tc.in)
		if s.Trials != len(tc.in) || s.P50 != tc.p50 || s.P99 != tc.p99 || s.Max != tc.max {
			t.Errorf("Summarize(%v) = %+v, want p50 %g p99 %g max %g", tc.in, s, tc.p50, tc.p99, tc.max)
		}
	}
	if s := Summarize(nil); s.Trials != 0 {
		t.Errorf("Summarize(nil) = %+v, want zero", s)
	}
}

func TestDurationsCountMissed(t *testing.T) {
	var d Durations
	d.Add(1e9, false)
	d.Add(15e9, true)
	if s := d.Stat(); s.Missed != 1 || s.Max != 15 || s.Trials != 2 {
		t.Errorf("Stat() = %+v, want 2 trials, 1 missed, max 15s", s)
	}
}
