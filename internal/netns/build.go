package netns

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// binPrefix names the per-process directory binaries are built into. The pid
// in it lets a later test binary remove directories of dead ones: no hook runs
// when a test binary exits, so nothing else would.
const binPrefix = "namecast-netns-bin-"

var builds = struct {
	sync.Mutex
	dir  string
	pkgs map[string]*build
}{pkgs: map[string]*build{}}

type build struct {
	once sync.Once
	path string
	err  error
}

// BuildBinary builds the main package pkg (an import path such as
// "github.com/namecast/namecast/cmd/namecast") with `go build` and returns
// the binary's path. Each package is built once per test binary, however many
// tests ask; a failed build fails every test that asks.
func BuildBinary(t testing.TB, pkg string) string {
	t.Helper()
	builds.Lock()
	b := builds.pkgs[pkg]
	if b == nil {
		b = &build{}
		builds.pkgs[pkg] = b
	}
	builds.Unlock()
	b.once.Do(func() { b.path, b.err = goBuild(pkg) })
	if b.err != nil {
		t.Fatalf("netns: %v", b.err)
	}
	return b.path
}

func goBuild(pkg string) (string, error) {
	root, err := binDir()
	if err != nil {
		return "", err
	}
	// One directory per package: two packages may share a base name.
	dir, err := os.MkdirTemp(root, "pkg")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, path.Base(pkg))
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building %s: %w", pkg, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", out, pkg)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
	}
	return out, nil
}

func binDir() (string, error) {
	builds.Lock()
	defer builds.Unlock()
	if builds.dir != "" {
		return builds.dir, nil
	}
	removeStaleBinDirs()
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", binPrefix, os.Getpid()))
	if err != nil {
		return "", err
	}
	builds.dir = dir
	return dir, nil
}

func removeStaleBinDirs() {
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), binPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidStr, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
	}
}
