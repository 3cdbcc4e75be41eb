package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// releaseLdflags stamps the VERSION file's version and the revision rev,
// as scripts/release.sh does.
func releaseLdflags(t *testing.T, rev string) string {
	const pkg = "github.com/namecast/namecast/internal/buildinfo"
	return "-X " + pkg + ".version=" + releaseVersion(t) + " -X " + pkg + ".revision=" + rev
}

// buildNamecast builds this command as a static binary (CGO_ENABLED=0, as
// a release is built) into a temporary directory, with extra go build
// flags, and returns its path.
func buildNamecast(t *testing.T, flags ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	out := filepath.Join(t.TempDir(), "namecast")
	args := append([]string{"build", "-o", out}, flags...)
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", strings.Join(flags, " "), err, b)
	}
	return out
}

// releaseVersion is the repository's VERSION file, trimmed.
func releaseVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	if v == "" || strings.ContainsAny(v, " \n") {
		t.Fatalf("VERSION holds %q, want one word such as 0.1.0", b)
	}
	return v
}
