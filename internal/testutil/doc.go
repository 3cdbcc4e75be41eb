// Package testutil holds the small helpers every namecast test leans on.
//
// It owns two habits from STYLE.md: wait for conditions, not durations
// ([Eventually]), and fail tests that leak goroutines ([CheckLeaks]). Both
// report through the testing.TB they are given and must be called from the
// test's own goroutine, like t.Fatal. A third, [SchedMeter], measures how
// promptly the machine ran the process, so a real-time test can tell a
// starved machine from slow code, and [Buffer] collects what several
// goroutines write (logs, a program's output). [DefaultParallel] lets a
// package whose parallel tests mostly wait run more of them at once than
// go test's default. They depend on nothing outside the standard library
// so any package may import them from its tests. A door's tests use
// package doortest (agent/doorkit/doortest).
package testutil
