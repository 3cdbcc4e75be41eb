package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// -p6-results is made when the flags are read: a size's half simulates for
// most of an hour before it saves, and a missing directory then lost it.
func TestP6ResultsDirectoryMadeUpFront(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results", "n2000")
	if _, err := parseFlags([]string{"-p6-results", dir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("-p6-results %s not made: %v", dir, err)
	}
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := parseFlags([]string{"-p6-results", filepath.Join(file, "results")}, io.Discard); err == nil {
		t.Fatal("-p6-results under a file was accepted")
	}
}

// An idle window that is not positive is refused before anything runs;
// -p6-idle 0 is its default, one push/pull round.
func TestIdleWindowsMustBePositive(t *testing.T) {
	for _, args := range [][]string{{"-p6-idle", "-5s"}, {"-p2-idle", "0s"}, {"-p4-idle", "-1s"}} {
		var stderr strings.Builder
		if _, err := parseFlags(args, &stderr); err == nil || !strings.Contains(stderr.String(), "must be positive") {
			t.Errorf("%v accepted (%v, %q)", args, err, stderr.String())
		}
	}
	if _, err := parseFlags([]string{"-p6-idle", "0"}, io.Discard); err != nil {
		t.Errorf("-p6-idle 0: %v", err)
	}
}
