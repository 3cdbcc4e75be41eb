package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time:
//
//	go build -ldflags "-X main.version=v1.2.3" ./cmd/namecast
//
// Without it, the module version or VCS revision from the build info is used.
var version = ""

func runVersion(c *cli, args []string) error {
	fs := newFlagSet("version", "", "Prints the version of this binary and the Go release that built it.")
	if err := c.noArgs(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintf(c.stdout, "namecast %s (%s)\n", versionString(), runtime.Version())
	return err
}

func versionString() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v // go install module@version
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "devel"
	}
	return "devel-" + rev + dirty
}
