package main

import (
	"bytes"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// requireTool finds a host tool a test needs, or skips the test saying so;
// when the environment variable env is "require" (CI, .ci/run) a missing
// tool fails it instead.
func requireTool(t *testing.T, name, env string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(env) == "require" {
			t.Fatalf("%s=require but %s is not installed", env, name)
		}
		t.Skipf("%s not installed (%s=require makes this fail)", name, env)
	}
	return path
}

// The Containerfile builds an image from scripts/release.sh's static
// binary with nothing pulled: a non-root user, the data dir a volume, and
// the binary in it starts an agent that answers /v1/health. The container
// itself runs where the machine lets podman run one; where the OCI runtime
// refuses (a sandbox that forbids setrlimit, say), the binary is copied
// out of the image and run, which still proves it is the static release
// build. CI sets NAMECAST_CONTAINER=require (.ci/run installs podman).
func TestContainerImage(t *testing.T) {
	podman := requireTool(t, "podman", "NAMECAST_CONTAINER")
	if testing.Short() {
		t.Skip("builds a release and an image; skipped with -short")
	}
	ctx := t.TempDir()
	release := exec.Command("../../scripts/release.sh")
	release.Env = append(os.Environ(), "DIST="+filepath.Join(ctx, "dist"), "ARCHES="+runtime.GOARCH)
	if out, err := release.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release.sh: %v\n%s", err, out)
	}
	for _, f := range []string{"Containerfile", ".containerignore", "contrib/container"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ctx, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-a", "../../"+f, filepath.Join(ctx, f)).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", f, err, out)
		}
	}
	var tag [6]byte
	rand.Read(tag[:])
	image := "localhost/namecast-test:" + hex.EncodeToString(tag[:])
	podmanOK(t, podman, "build", "--pull=never", "-t", image, ctx)
	t.Cleanup(func() { exec.Command(podman, "rmi", "-f", image).Run() })

	var cfg struct {
		User       string
		Entrypoint []string
		Volumes    map[string]any
	}
	if err := json.Unmarshal([]byte(podmanOK(t, podman, "image", "inspect", "--format", "{{json .Config}}", image)), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.User == "" || cfg.User == "0" || strings.HasPrefix(cfg.User, "0:") || cfg.User == "root" {
		t.Errorf("image runs as user %q, want a non-root one", cfg.User)
	}
	if _, ok := cfg.Volumes["/var/lib/namecast"]; !ok {
		t.Errorf("image volumes %v lack the data dir /var/lib/namecast", cfg.Volumes)
	}
	if len(cfg.Entrypoint) != 1 || cfg.Entrypoint[0] != "/usr/bin/namecast" {
		t.Errorf("image entrypoint %q, want [/usr/bin/namecast]", cfg.Entrypoint)
	}

	httpAddr := freeAddr(t)
	args := []string{"agent", "--dev", "--node", "img", "--bind", freeAddr(t), "--http", httpAddr,
		"--rocketmq", "off", "--zookeeper", "off", "--nacos", "off", "--consul", "off", "--dns", "off", "--data-dir", "/var/lib/namecast"}
	name := "namecast-test-" + hex.EncodeToString(tag[:])
	var logs func() string
	if out, err := exec.Command(podman, append([]string{"run", "-d", "--name", name, "--network", "host", image}, args...)...).CombinedOutput(); err == nil {
		t.Logf("running the image as a container")
		t.Cleanup(func() { exec.Command(podman, "rm", "-f", "-v", "-t", "0", name).Run() })
		logs = func() string { b, _ := exec.Command(podman, "logs", name).CombinedOutput(); return string(b) }
	} else {
		exec.Command(podman, "rm", "-f", name).Run()
		t.Logf("podman cannot run a container here (%v: %s); running the binary copied out of the image", err, strings.TrimSpace(string(out)))
		bin := copyOut(t, podman, image, "/usr/bin/namecast")
		args[len(args)-1] = t.TempDir()
		logs = runBinary(t, bin, args)
	}
	testutil.Eventually(t, 60*time.Second, func() error {
		resp, err := http.Get("http://" + httpAddr + "/v1/health")
		if err != nil {
			return fmt.Errorf("%v; log:\n%s", err, logs())
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"node":"img"`)) {
			return fmt.Errorf("GET /v1/health: %s %s", resp.Status, body)
		}
		return nil
	})
}

func podmanOK(t *testing.T, podman string, args ...string) string {
	t.Helper()
	out, err := exec.Command(podman, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// copyOut copies path out of image and checks it is a static binary of
// the release: no ELF interpreter, and the VERSION file's version.
func copyOut(t *testing.T, podman, image, path string) string {
	t.Helper()
	id := strings.TrimSpace(podmanOK(t, podman, "create", image))
	defer exec.Command(podman, "rm", "-f", id).Run()
	bin := filepath.Join(t.TempDir(), "namecast")
	podmanOK(t, podman, "cp", id+":"+path, bin)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s in the image is dynamically linked: it cannot run FROM scratch", path)
		}
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "namecast "+releaseVersion(t)+"\n") {
		t.Errorf("%s version: %q, %v; want namecast %s", path, out, err, releaseVersion(t))
	}
	return bin
}

// runBinary runs bin with args until the test ends (interrupted, so the
// agent leaves) and returns its log so far.
func runBinary(t *testing.T, bin string, args []string) func() string {
	t.Helper()
	log := newSyncBuffer()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return log.String
}
