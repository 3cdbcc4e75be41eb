package zookeeper_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A deviation is a documented way a gossip-backed agent answers
// differently from ZooKeeper (wire spec §7). The differential run masks a
// step only by a deviation's name, and then still checks that the agent
// gave the answer the deviation promises.
type deviation struct {
	why   string
	agent string // what the agent must answer at a step this masks
}

var deviations = map[string]deviation{
	"sequential-unimplemented": {
		why: "sequential names need one leader to be unique and ordered; no Dubbo, dubbo-go or " +
			"curator-x-discovery path uses them, so the agent refuses them (§7.6)",
		agent: "UNIMPLEMENTED",
	},
	"unknown-opcode-keeps-connection": {
		why: "ZooKeeper answers an unknown opcode with UNIMPLEMENTED and closes the connection; the agent " +
			"answers the same code and keeps serving, since frames are length-delimited and nothing desynchronises (§2.1)",
		agent: "xid=1 err=-6, then the connection stayed open (ping answered: true)",
	},
	"acl-unimplemented": {
		why: "ACLs are not enforced on a loopback listener and no Dubbo, dubbo-go or Curator registry path " +
			"reads them back, so getACL/setACL answer UNIMPLEMENTED (TL;DR: 6/7 ACL may answer -6)",
		agent: "UNIMPLEMENTED []",
	},
	"multi-unimplemented": {
		why:   "transactions need a global order the gossip cluster does not have; no Dubbo or dubbo-go path sends multi (TL;DR)",
		agent: "UNIMPLEMENTED",
	},
}

// diffTranscripts compares the agent's transcript with ZooKeeper's: every
// unmasked step must match exactly; a masked step must be masked on both
// sides by the same known deviation and the agent must answer as it says.
func diffTranscripts(ref, got *transcript) []string {
	var diffs []string
	n := max(len(ref.entries), len(got.entries))
	for i := 0; i < n; i++ {
		if i >= len(ref.entries) || i >= len(got.entries) {
			diffs = append(diffs, fmt.Sprintf("#%d: transcripts differ in length (%d vs %d steps)", i, len(ref.entries), len(got.entries)))
			break
		}
		r, g := ref.entries[i], got.entries[i]
		switch {
		case r.step != g.step:
			diffs = append(diffs, fmt.Sprintf("#%d: step %q on ZooKeeper, %q on the agent", i, r.step, g.step))
		case r.mask != g.mask:
			diffs = append(diffs, fmt.Sprintf("#%d %s: masked %q vs %q", i, r.step, r.mask, g.mask))
		case r.mask != "":
			d, ok := deviations[r.mask]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("#%d %s: unknown deviation %q", i, r.step, r.mask))
			} else if d.agent != "" && g.value != d.agent {
				diffs = append(diffs, fmt.Sprintf("#%d %s: deviation %s promises %q, agent answered %q", i, r.step, r.mask, d.agent, g.value))
			}
		case r.value != g.value:
			diffs = append(diffs, fmt.Sprintf("#%d %s:\n\tZooKeeper: %s\n\tagent:     %s", i, r.step, r.value, g.value))
		}
	}
	return diffs
}

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the real ZooKeeper")

// TestDifferentialReference runs the script against a real ZooKeeper 3.8
// and compares it with the transcript checked in: it keeps the script
// honest (every step answers as ZooKeeper does) and shows a reader what
// ZooKeeper answers. -update rewrites the golden file.
func TestDifferentialReference(t *testing.T) {
	t.Parallel()
	z := startRealZK(t)
	tr := runScript(t, z.Addr)
	golden := filepath.Join("testdata", "differential-zk38.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(tr.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.String(); got != string(want) {
		t.Fatalf("ZooKeeper 3.8 answered the script differently from %s (run with -update if the script changed):\n%s", golden, lineDiff(string(want), got))
	}
	used := map[string]bool{}
	for _, e := range tr.entries {
		used[e.mask] = true
	}
	for name := range deviations {
		if !used[name] {
			t.Errorf("deviation %s masks no step of the script: exercise it or drop it", name)
		}
	}
}

func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d\n\t- %s\n\t+ %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// TestDoorScriptReference runs the door script (issue 25's differences)
// against a real ZooKeeper 3.8, both sessions on it, and compares with the
// transcript checked in. -update rewrites it.
func TestDoorScriptReference(t *testing.T) {
	t.Parallel()
	z := startRealZK(t)
	tr := runDoorScript(t, z.Addr, z.Addr)
	golden := filepath.Join("testdata", "door-zk38.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(tr.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := tr.String(); got != string(want) {
		t.Fatalf("ZooKeeper 3.8 answered the door script differently from %s (run with -update if the script changed):\n%s", golden, lineDiff(string(want), got))
	}
}
