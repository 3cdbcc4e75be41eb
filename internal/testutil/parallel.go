package testutil

import (
	"flag"
	"strconv"
)

// DefaultParallel makes n the -test.parallel of a test binary whose
// parallel tests wait far more than they compute (real servers, JVMs,
// network namespaces, session timeouts), unless the command line gave
// one: go test's default, GOMAXPROCS, would run two at a time on two
// cores while both mostly sleep. Call it from TestMain before m.Run.
func DefaultParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given && n > 0 {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
