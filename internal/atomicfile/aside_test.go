package atomicfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Each restart that finds the file damaged again sets it aside under a
// new name: the evidence of an earlier one is never overwritten. A copy
// leaves the file in place.
func TestSetAsideNeverOverwritesAnEarlierCopy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.log")
	var got []string
	for i, content := range []string{"first", "second", "third"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		set := SetAside
		if i == 1 {
			set = CopyAside
		}
		aside, err := set(path)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(aside); string(b) != content {
			t.Fatalf("%s holds %q, want %q", aside, b, content)
		}
		_, err = os.Stat(path)
		if kept := err == nil; kept != (i == 1) {
			t.Fatalf("after setting aside %q the file is still there: %v", content, kept)
		}
		got = append(got, filepath.Base(aside))
	}
	if want := []string{"rules.log.corrupt", "rules.log.corrupt.1", "rules.log.corrupt.2"}; !slices.Equal(got, want) {
		t.Fatalf("set aside as %q, want %q", got, want)
	}
	if aside, err := SetAside(filepath.Join(dir, "missing")); err == nil || aside != "" {
		t.Fatalf("setting aside a missing file: %q, %v", aside, err)
	}
}
