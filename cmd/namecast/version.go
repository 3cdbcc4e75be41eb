package main

import (
	"fmt"
	"runtime"

	"github.com/namecast/namecast/internal/buildinfo"
)

// runVersion prints the release version (stamped from the VERSION file by
// scripts/release.sh and the Containerfile; "devel" for a plain go build),
// the VCS revision and the Go release, one per line.
func runVersion(c *cli, args []string) error {
	fs := newFlagSet("version", "", "Prints the version of this binary, the commit it was built from and the Go release that built it.")
	if err := c.noArgs(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintf(c.stdout, "namecast %s\nrevision %s\n%s %s/%s\n",
		buildinfo.Version(), buildinfo.Revision(), buildinfo.GoVersion(), runtime.GOOS, runtime.GOARCH)
	return err
}

func versionString() string { return buildinfo.Version() }
