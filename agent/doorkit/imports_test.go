package doorkit_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A door depends on the host and the kit, never on another door's package:
// what two doors share lives in routes, dubbo, the kit, or a package of its
// own (the Consul service model, agent/consul/catalog, which the Consul and
// DNS doors both read), so a door can be added or removed alone.
func TestNoDoorImportsAnother(t *testing.T) {
	const agent = "github.com/namecast/namecast/agent/"
	doors, _ := filepath.Glob("../*/door.go")
	if len(doors) < 4 {
		t.Fatalf("found %d doors (../*/door.go), want at least 4", len(doors))
	}
	var names []string
	for _, d := range doors {
		names = append(names, filepath.Base(filepath.Dir(d)))
	}
	for _, door := range names {
		files, _ := filepath.Glob(filepath.Join("..", door, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				for _, other := range names {
					if other != door && path == agent+other {
						t.Errorf("%s imports %s: the %s door depends on the %s door", f, path, door, other)
					}
				}
			}
		}
	}
}
