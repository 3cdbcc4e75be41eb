package testutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outside are notes a clone cannot follow, spelled so that this file does
// not name them itself.
var outside = [2]string{"shared" + "/protocols", "DESIGN" + ".md"}

var (
	sectionRE  = regexp.MustCompile(`\x{a7}\s*(\d+(?:\.\d+)?)`)
	protocolRE = regexp.MustCompile(`docs/protocols/([a-z0-9-]+\.md)`)
)

// TestProtocolCitationsResolve: the code cites protocol notes by section
// number after a section sign; each citation must lead a reader of a clone to a section that
// exists, in a note under docs/protocols. A file says which note it cites,
// or its package's doc.go does. Nothing may cite notes outside the
// repository (a clone cannot follow them).
func TestProtocolCitationsResolve(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skip("not run from inside the repository")
	}
	sections := map[string]map[string]bool{} // note -> section numbers it has
	notes, _ := filepath.Glob(filepath.Join(root, "docs", "protocols", "*.md"))
	if len(notes) == 0 {
		t.Fatal("no notes in docs/protocols")
	}
	headingRE := regexp.MustCompile(`(?m)^#{2,4} (\d+(?:\.\d+)?)\.? `)
	for _, n := range notes {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, m := range headingRE.FindAllStringSubmatch(string(b), -1) {
			have[m[1]] = true
		}
		sections[filepath.Base(n)] = have
	}
	// pkgNote is the note a directory's non-test files name, if just one.
	pkgNote := func(dir string) string {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		found := map[string]bool{}
		for _, f := range files {
			b, _ := os.ReadFile(f)
			for _, m := range protocolRE.FindAllStringSubmatch(string(b), -1) {
				found[m[1]] = true
			}
		}
		if len(found) != 1 {
			return ""
		}
		for n := range found {
			return n
		}
		return ""
	}
	cited := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		src := string(b)
		rel, _ := filepath.Rel(root, path)
		if strings.Contains(src, outside[0]) || strings.Contains(src, outside[1]) {
			t.Errorf("%s cites notes outside the repository (shared/, DESIGN): cite docs/ instead", rel)
		}
		if !strings.Contains(src, "\u00a7") {
			return nil
		}
		fileNote := ""
		if m := protocolRE.FindAllStringSubmatch(src, -1); len(m) > 0 {
			fileNote = m[0][1]
		}
		dirNote := pkgNote(filepath.Dir(path))
		for i, line := range strings.Split(src, "\n") {
			refs := sectionRE.FindAllStringSubmatch(line, -1)
			if len(refs) == 0 {
				continue
			}
			note := dirNote
			if m := protocolRE.FindStringSubmatch(line); m != nil {
				note = m[1]
			} else if fileNote != "" {
				note = fileNote
			}
			if note == "" {
				t.Errorf("%s:%d cites %s but neither the file nor its package's doc names a docs/protocols note", rel, i+1, refs[0][0])
				continue
			}
			have, ok := sections[note]
			if !ok {
				t.Errorf("%s:%d cites docs/protocols/%s, which does not exist", rel, i+1, note)
				continue
			}
			for _, r := range refs {
				cited++
				if !have[r[1]] {
					t.Errorf("%s:%d cites §%s of docs/protocols/%s, which has no such section", rel, i+1, r[1], note)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d section citations checked", cited)
}
