package main

import (
	"encoding/base64"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestTopLevelUsage(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		r := run(t, "", args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: namecast COMMAND") || r.stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
		for _, cmd := range commands() {
			if !strings.Contains(r.stdout, "\n  "+cmd.name+" ") {
				t.Errorf("%v: usage does not list %s", args, cmd.name)
			}
		}
	}
	if r := run(t, ""); r.code != 2 || !strings.HasPrefix(r.stderr, "Usage: namecast") {
		t.Errorf("no arguments: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestUnknownCommand(t *testing.T) {
	r := run(t, "", "frobnicate")
	if r.code != 2 {
		t.Errorf("exit %d, want 2", r.code)
	}
	if !strings.Contains(r.stderr, `unknown command "frobnicate"`) || !strings.Contains(r.stderr, "members, topics, route") {
		t.Errorf("stderr does not name the command and the valid ones: %q", r.stderr)
	}
	r = run(t, "", "--http", "x", "members")
	if r.code != 2 || !strings.Contains(r.stderr, "flags go after it") {
		t.Errorf("flag before command: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestHelpCommand(t *testing.T) {
	for _, tt := range []struct{ args, want []string }{
		{[]string{"help", "route"}, []string{"Usage: namecast route TOPIC", "--http address", "--json"}},
		{[]string{"route", "--help"}, []string{"Usage: namecast route TOPIC"}},
		{[]string{"route", "-h"}, []string{"Usage: namecast route TOPIC"}},
		{[]string{"help", "services"}, []string{"--category category", "(default providers)"}},
		{[]string{"help", "register"}, []string{"namecast register broker|url", "--file broker.json"}},
		{[]string{"register", "url", "--help"}, []string{"Usage: namecast register url URL", "--ttl duration"}},
		{[]string{"help", "watch"}, []string{"namecast watch route|topics|services|members"}},
		{[]string{"help", "keys"}, []string{"install the new key everywhere"}},
	} {
		r := run(t, "", tt.args...)
		if r.code != 0 {
			t.Errorf("%v: exit %d, stderr %q", tt.args, r.code, r.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: stdout lacks %q:\n%s", tt.args, w, r.stdout)
			}
		}
	}
	if r := run(t, "", "help", "nope"); r.code != 2 || !strings.Contains(r.stderr, `unknown command "nope"`) {
		t.Errorf("help nope: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestBadUsageExitsTwo(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"route"}, "want one TOPIC, got 0 arguments"},
		{[]string{"route", "a", "b"}, "want one TOPIC, got 2 arguments"},
		{[]string{"members", "extra"}, `unexpected argument "extra"`},
		{[]string{"members", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"register"}, "register what? Use one of: broker, url"},
		{[]string{"register", "topic"}, `unknown register subcommand "topic"`},
		{[]string{"register", "broker"}, "--file is required"},
		{[]string{"register", "url", "--ttl", "soon", "dubbo://h/x"}, `invalid value "soon" for flag -ttl`},
		{[]string{"unregister", "broker", "c", "b"}, "want CLUSTER BROKERNAME BROKERID, got 2"},
		{[]string{"unregister", "broker", "c", "b", "master"}, `BROKERID "master" must be a non-negative integer`},
		{[]string{"watch", "route"}, "want one TOPIC"},
		{[]string{"join"}, "want at least one ADDR"},
		{[]string{"keys", "install"}, "keys install wants one KEY, got 0 arguments"},
		{[]string{"keys", "list", "k"}, `unexpected argument "k": keys list takes flags only`},
		{[]string{"members", "--http", "ftp://h:1"}, "--http: namecast: bad agent address"},
	} {
		r := run(t, "", tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) || !strings.Contains(r.stderr, "Run 'namecast help") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// The version command prints the release version, the revision and the Go
// release, in-process and from real builds: a plain go build says devel, a
// release build the VERSION file's version.
func TestVersion(t *testing.T) {
	out := ok(t, "version")
	want := regexp.MustCompile(`^namecast \S+\nrevision \S+\ngo1\.\S+ \S+/\S+\n$`)
	if !want.MatchString(out) {
		t.Errorf("version printed %q", out)
	}
	if !strings.Contains(out, runtime.Version()) {
		t.Errorf("version %q lacks %s", out, runtime.Version())
	}

	b, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v): no revision to compare", err)
	}
	rev := strings.TrimSpace(string(b))
	// Go stamps the revision itself only in a plain clone (not in a git
	// worktree, whose .git is a file); a release build stamps it always.
	plainRev := "unknown"
	if fi, err := os.Stat("../../.git"); err == nil && fi.IsDir() {
		plainRev = rev
	}
	for _, tt := range []struct {
		name, want, rev string
		flags           []string
	}{
		{"plain go build", "devel", plainRev, []string{"-buildvcs=auto"}},
		{"release build", releaseVersion(t), rev, []string{"-ldflags", releaseLdflags(t, rev)}},
	} {
		bin := buildNamecast(t, tt.flags...)
		b, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatalf("%s: namecast version: %v", tt.name, err)
		}
		lines := strings.Split(string(b), "\n")
		if len(lines) < 3 || lines[0] != "namecast "+tt.want ||
			!strings.HasPrefix(lines[1], "revision "+tt.rev) ||
			!strings.HasPrefix(lines[2], runtime.Version()+" ") {
			t.Errorf("%s printed %q; want namecast %s, revision %s, %s", tt.name, b, tt.want, tt.rev, runtime.Version())
		}
	}
}

func TestKeygen(t *testing.T) {
	a, b := strings.TrimSpace(ok(t, "keygen")), strings.TrimSpace(ok(t, "keygen"))
	key, err := base64.StdEncoding.DecodeString(a)
	if err != nil || len(key) != 32 {
		t.Errorf("keygen printed %q: %d bytes, %v", a, len(key), err)
	}
	if a == b {
		t.Error("two keys are the same")
	}
}

func TestFlagsAfterArguments(t *testing.T) {
	f := newFakeAgent(t)
	f.on("GET /v1/topics/T", 200, `{"queueDatas":[],"brokerDatas":[]}`)
	for _, args := range [][]string{
		{"route", "--http", f.addr(), "T"},
		{"route", "T", "--http", f.addr()},
		{"route", "-http=" + f.addr(), "--json", "T"},
		{"route", "--http", f.addr(), "--", "T"},
	} {
		if r := run(t, "", args...); r.code != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
	// After "--" a dash-led word is an argument, not a flag.
	r := run(t, "", "route", "--http", f.addr(), "--", "--json")
	if r.code != 1 || f.last(t).path != "/v1/topics/--json" {
		t.Errorf("after --: exit %d, asked %s", r.code, f.last(t).path)
	}
}

// The command list names every subcommand a command has: it showed
// `register broker|url` long after `register instance` was added, and
// `watch route|services|members` without `apps`.
func TestUsageNamesEverySubcommand(t *testing.T) {
	usage := ok(t, "--help")
	checked := 0
	for _, cmd := range commands() {
		if cmd.name == "agent" || !strings.Contains(run(t, "", cmd.name, "--help").stdout, "SUBCOMMAND --help") {
			continue // no subcommands (and without arguments, agent runs one, leave asks one to leave)
		}
		r := run(t, "", cmd.name)
		_, subs, found := strings.Cut(r.stderr, "Use one of: ")
		if !found {
			continue // no subcommands
		}
		subs, _, _ = strings.Cut(subs, "\n")
		want := strings.ReplaceAll(subs, ", ", "|")
		checked++
		if cmd.args != want {
			t.Errorf("namecast --help lists `%s %s`; its subcommands are %s", cmd.name, cmd.args, want)
		}
		if !strings.Contains(usage, cmd.name+" "+want) {
			t.Errorf("namecast --help lacks `%s %s`:\n%s", cmd.name, want, usage)
		}
	}
	if checked < 4 {
		t.Errorf("found %d commands with subcommands, want watch, register, unregister and keys", checked)
	}
}
