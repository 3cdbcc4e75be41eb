package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const unitFile = "../../contrib/systemd/namecast.service"

// The systemd unit in contrib/ is what the README tells operators to
// install: systemd-analyze verify must take it without a word, and it must
// keep the choices the README's signal table depends on. CI sets
// NAMECAST_SYSTEMD=require (.ci/run installs systemd), so there a missing
// systemd-analyze fails instead of skipping.
func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	for _, want := range []string{
		"\nType=notify\n",        // READY=1 once synced (internal/sdnotify)
		"\nRestart=on-failure\n", // a crash restarts it; routes stay meanwhile
		"\nKillSignal=SIGTERM\n", // with --data-dir: stop for a restart, routes kept
		"\nExecStart=/usr/local/bin/namecast agent --data-dir /var/lib/namecast --encrypt-file %d/gossip.key ",
		"\nLoadCredential=gossip.key:/etc/namecast/gossip.key\n", // the key, readable by the service alone
		"\nStateDirectory=namecast\n", // makes /var/lib/namecast
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("%s lacks %q", unitFile, strings.TrimSpace(want))
		}
	}
	// The gossip key is never on a command line (ps shows it to every
	// user of the host): only --encrypt-file, in the unit and in the
	// README's recipe for /etc/default/namecast.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{unitFile: unit, "README.md": string(readme)} {
		if m := regexp.MustCompile(`--encrypt[ =]\S+`).FindString(text); m != "" {
			t.Errorf("%s puts the gossip key on a command line: %q; use --encrypt-file", name, m)
		}
	}
	if strings.Contains(unit, "--leave-on-terminate") {
		t.Errorf("%s: --leave-on-terminate would make every restart withdraw this host's routes", unitFile)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("NAMECAST_SYSTEMD") == "require" {
			t.Fatal("NAMECAST_SYSTEMD=require but systemd-analyze is not installed")
		}
		t.Skip("systemd-analyze not installed (NAMECAST_SYSTEMD=require makes this fail)")
	}
	// verify checks that ExecStart's binary exists and is executable:
	// this test's own binary stands in for the installed namecast.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "namecast.service")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/namecast", exe)), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(analyze, "verify", path)
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err = cmd.Run()
	// verify exits 0 on most mistakes (an unknown key, a bad value) and
	// only says so: any word about our unit is a failure. Lines about
	// other units of the host running it are not ours to judge.
	var ours []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "namecast.service") {
			ours = append(ours, line)
		}
	}
	if err != nil || len(ours) > 0 {
		t.Fatalf("systemd-analyze verify %s: %v\n%s", unitFile, err, stderr.String())
	}
}
