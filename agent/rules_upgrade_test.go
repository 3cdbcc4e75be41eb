package agent

import (
	"bytes"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/namecast/namecast/routes"
)

// A data dir whose rules.log an agent of release 0.1.0 wrote (lines of
// "crc32c-hex payload"; testdata/rules-0.1.0, written by that release's
// code: a=1 and b=2 in rules.json, then a=9, b deleted and c=3 in the
// log) restores every rule, and its log is rewritten once in package
// wal's format: a second start reads the same, and the file is no
// longer lines.
func TestRulesLogOfReleaseZeroOneIsReadAndRewritten(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{rulesFile, rulesLogFile} {
		b, err := os.ReadFile(filepath.Join("testdata", "rules-0.1.0", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	load := func() map[string]string {
		t.Helper()
		s := &rulesStore{dir: dir, logger: slog.New(slog.DiscardHandler), table: routes.NewTable("self", 2)}
		if err := s.load(); err != nil {
			t.Fatal(err)
		}
		s.close()
		out := map[string]string{}
		for _, r := range s.table.Rules() {
			out[r.Key] = r.Record.KV.Value
		}
		return out
	}
	want := map[string]string{"kv/ns/a": "9", "kv/ns/c": "3"}
	if got := load(); !maps.Equal(got, want) {
		t.Fatalf("restored %v, want %v", got, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, rulesLogFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || bytes.Contains(b, []byte(" {")) || bytes.Contains(b, []byte("\n")) {
		t.Fatalf("rules.log is not in package wal's format (lines, or not even its mark): %q", b)
	}
	if got := load(); !maps.Equal(got, want) {
		t.Fatalf("the second start restored %v, want %v", got, want)
	}
	if aside, _ := filepath.Glob(filepath.Join(dir, "*.corrupt*")); len(aside) > 0 {
		t.Fatalf("an intact old data dir was set aside as damaged: %v", slices.Sorted(slices.Values(aside)))
	}
}
