// Package buildinfo says which build of namecast is running: the release
// version stamped at build time, the VCS revision and the Go release. The
// binary's `version` command, GET /v1/agent and the namecast_build_info
// metric all read it here, so they never disagree.
//
// A release build stamps the version from the repository's VERSION file
// (scripts/release.sh, the Containerfile):
//
//	go build -ldflags "-X github.com/namecast/namecast/internal/buildinfo.version=$(cat VERSION)
//	  -X github.com/namecast/namecast/internal/buildinfo.revision=$(git rev-parse HEAD)" ./cmd/namecast
//
// A plain `go build` leaves it unset and the version is "devel"; the
// revision still comes from the VCS stamp Go embeds.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// version and revision are set with -ldflags -X (see the package
// comment); the release recipes stamp the revision too, as Go's own VCS
// stamp is missing from builds in a git worktree or with -buildvcs=false.
var version, revision = "", ""

// Version is the release version, or the module version of a `go install
// module@version`, or "devel". A build inside a checkout is "devel" even
// though Go stamps it with a pseudo-version made from the commit (a clean
// clone gets v0.0.0-DATE-COMMIT): that names no release, and the revision
// line already says which commit it is.
func Version() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && !fromCheckout(info) {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return v
		}
	}
	return "devel"
}

// fromCheckout says whether the binary was built inside a VCS checkout (Go
// stamps vcs.* settings then), not from the module cache.
func fromCheckout(info *debug.BuildInfo) bool {
	for _, s := range info.Settings {
		if s.Key == "vcs" {
			return true
		}
	}
	return false
}

// Revision is the VCS commit the binary was built from: the stamped one,
// else Go's VCS stamp with "-modified" when the tree had uncommitted
// changes, else "unknown" (a build outside a checkout, in a git worktree,
// or with -buildvcs=false).
func Revision() string {
	if revision != "" {
		return revision
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "-modified"
			}
		}
	}
	if rev == "" {
		return "unknown"
	}
	return rev + modified
}

// GoVersion is the Go release that built the binary.
func GoVersion() string { return runtime.Version() }
