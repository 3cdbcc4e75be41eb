package bench

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// InBubble runs f inside a testing/synctest bubble, in which time moves
// only when every goroutine of the bubble is blocked: memberlist's timers
// of seconds cost no wall time, and thousands of members fit one process
// (P6). synctest only hands out bubbles to tests, so outside a test binary
// InBubble runs f as the one test of a testing.M built with MainStart, the
// entry point `go test` generates; that API is not covered by Go's
// compatibility promise, and a Go release that changes it breaks this
// file's build, loudly. testing's own output ("PASS") goes to stderr, so
// stdout keeps only the report.
//
// Inside a test binary (TestSmoke), set Bubble to a function that calls
// synctest.Test with the running test's T instead.
func InBubble(f func(t *testing.T)) error {
	if Bubble != nil {
		return Bubble(f)
	}
	bubbleMu.Lock()
	defer bubbleMu.Unlock()
	var failed bool
	m := testing.MainStart(bubbleDeps{}, []testing.InternalTest{{Name: "bubble", F: func(t *testing.T) {
		synctest.Test(t, f)
		failed = t.Failed()
	}}}, nil, nil, nil)
	if !flag.CommandLine.Parsed() {
		_ = flag.CommandLine.Parse(nil)
	}
	stdout := os.Stdout
	os.Stdout = os.Stderr
	code := m.Run()
	os.Stdout = stdout
	if code != 0 || failed {
		return fmt.Errorf("simulation failed (exit %d); its log is above on stderr", code)
	}
	return nil
}

// Bubble, if set, replaces InBubble's own testing.M (see InBubble).
var Bubble func(f func(t *testing.T)) error

var bubbleMu sync.Mutex

// corpusEntry mirrors testing's unexported alias of the same name.
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

// bubbleDeps is the least testing.MainStart needs: no profiles, no fuzzing,
// no coverage, every test name matches.
type bubbleDeps struct{}

var errUnsupported = errors.New("not supported in a simulation")

func (bubbleDeps) ImportPath() string                          { return "namecast-bench" }
func (bubbleDeps) ModulePath() string                          { return "" }
func (bubbleDeps) MatchString(pat, str string) (bool, error)   { return true, nil }
func (bubbleDeps) SetPanicOnExit0(bool)                        {}
func (bubbleDeps) StartCPUProfile(io.Writer) error             { return errUnsupported }
func (bubbleDeps) StopCPUProfile()                             {}
func (bubbleDeps) StartTestLog(io.Writer)                      {}
func (bubbleDeps) StopTestLog() error                          { return nil }
func (bubbleDeps) WriteProfileTo(string, io.Writer, int) error { return errUnsupported }
func (bubbleDeps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return errUnsupported
}
func (bubbleDeps) RunFuzzWorker(func(corpusEntry) error) error { return errUnsupported }
func (bubbleDeps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error) {
	return nil, errUnsupported
}
func (bubbleDeps) CheckCorpus([]any, []reflect.Type) error { return nil }
func (bubbleDeps) ResetCoverage()                          {}
func (bubbleDeps) SnapshotCoverage()                       {}
func (bubbleDeps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}
