package main

import (
	"io"
	"os"
	"path/filepath"
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
