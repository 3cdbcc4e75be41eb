package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README is what a new user copies from: every namecast command and
// flag it shows must exist in this binary, every flag an example program is
// shown with must exist in that program, and every agent flag must be in
// the README. (It documented --discover-interface, which the agent never
// had.)
func TestReadmeCommandsAndFlagsExist(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	code, prose := splitMarkdown(string(b))
	known := map[string]bool{} // every flag of every namecast command
	shown := map[string]bool{} // agent flags the README shows anywhere
	check := func(where string, words []string) {
		t.Helper()
		flags, ok := commandFlags(t, words)
		if !ok {
			t.Errorf("README %s: `namecast %s`: no such command", where, strings.Join(words, " "))
			return
		}
		for _, w := range words {
			if name, isFlag := flagName(w); isFlag {
				if !flags[name] {
					t.Errorf("README %s: `namecast %s`: %s has no flag --%s", where, strings.Join(words, " "), words[0], name)
				}
				if words[0] == "agent" {
					shown[name] = true
				}
			}
		}
	}
	for _, cmd := range commands() {
		flags, _ := commandFlags(t, []string{cmd.name})
		for f := range flags {
			known[f] = true
		}
	}
	for _, sub := range []string{"broker", "url"} {
		flags, _ := commandFlags(t, []string{"register", sub})
		for f := range flags {
			known[f] = true
		}
	}
	examples := map[string]bool{} // flags of the example programs
	for _, line := range code {
		if words, ok := namecastCall(line); ok {
			check("code", words)
			continue
		}
		if dir, args, ok := exampleCall(line); ok {
			flags := sourceFlags(t, dir)
			for _, w := range args {
				if name, isFlag := flagName(w); isFlag && !flags[name] {
					t.Errorf("README code: %q: %s defines no flag %s", line, dir, name)
				}
			}
		}
	}
	for _, dir := range []string{"broker-producer", "dubbo-consumer", "dubbo-provider", "rocketmq", "dubbo-go"} {
		for f := range sourceFlags(t, filepath.Join("examples", dir)) {
			examples[f] = true
		}
	}
	for _, span := range prose {
		if words, ok := namecastCall(span); ok {
			check("text", words)
			continue
		}
		if otherProgram(span) {
			continue // another program's command line (chromium, curl): its flags are its own
		}
		for _, w := range strings.Fields(span) {
			name, isFlag := flagName(w)
			if !isFlag || !strings.HasPrefix(w, "--") {
				continue
			}
			if !known[name] && !examples[name] {
				t.Errorf("README text: `%s`: no namecast command or example has a flag --%s", span, name)
			}
			if known[name] {
				shown[name] = true
			}
		}
	}
	agentFlags, _ := commandFlags(t, []string{"agent"})
	for f := range agentFlags {
		if !shown[f] {
			t.Errorf("README never shows the agent flag --%s", f)
		}
	}
}

// splitMarkdown returns the lines of the fenced code blocks (outputs and
// comments left out) and the inline code spans of the rest.
func splitMarkdown(md string) (code, spans []string) {
	var text strings.Builder
	in := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			text.WriteString(line + "\n")
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			code = append(code, line)
		}
	}
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(text.String(), -1) {
		spans = append(spans, strings.Join(strings.Fields(m[1]), " "))
	}
	return code, spans
}

var namecastRE = regexp.MustCompile(`(?:^|[\s(]|\./|/cmd/)namecast\s+([a-z].*)$`)

// namecastCall finds a run of this binary in a line and returns its words.
func namecastCall(line string) ([]string, bool) {
	if strings.Contains(line, "namecast-bench") {
		return nil, false
	}
	m := namecastRE.FindStringSubmatch(line)
	if m == nil {
		return nil, false
	}
	words := strings.Fields(m[1])
	if n := len(words); words[n-1] == "&" {
		words = words[:n-1]
	}
	return words, true
}

var exampleRE = regexp.MustCompile(`go run \./(examples/[a-z-]+)(.*)$|cd (examples/[a-z-]+) && go run \. ([^)]*)`)

// exampleCall finds a run of an example program and returns its directory
// and arguments.
func exampleCall(line string) (dir string, args []string, ok bool) {
	m := exampleRE.FindStringSubmatch(line)
	switch {
	case m == nil:
		return "", nil, false
	case m[1] != "":
		return m[1], strings.Fields(m[2]), true
	default:
		return m[3], strings.Fields(m[4]), true
	}
}

// flagName is w's flag name if w is a flag (-x, --x, --x=v).
func flagName(w string) (string, bool) {
	if !strings.HasPrefix(w, "-") || w == "-" || w == "--" {
		return "", false
	}
	name := strings.TrimLeft(w, "-")
	name, _, _ = strings.Cut(name, "=")
	return name, regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(name)
}

var helpFlagRE = regexp.MustCompile(`(?m)^  --([a-z][a-z0-9-]*)`)

// commandFlags runs words' command with --help (the subcommand too, for
// commands that have them) and returns the flags it lists.
func commandFlags(t *testing.T, words []string) (map[string]bool, bool) {
	if _, ok := lookup(words[0]); !ok {
		return nil, false
	}
	var help string
	if words[0] == "agent" {
		var b strings.Builder
		parseAgentFlags([]string{"--help"}, &b)
		help = b.String()
	} else {
		r := run(t, "", words[0], "--help")
		help = r.stdout
		if strings.Contains(help, "SUBCOMMAND --help") {
			if len(words) < 2 || strings.HasPrefix(words[1], "-") {
				return nil, false
			}
			r = run(t, "", words[0], words[1], "--help")
			if r.code != 0 {
				return nil, false
			}
			help = r.stdout
		}
	}
	flags := map[string]bool{"help": true}
	for _, m := range helpFlagRE.FindAllStringSubmatch(help, -1) {
		flags[m[1]] = true
	}
	return flags, true
}

var sourceFlagRE = regexp.MustCompile(`\b(?:flag|fs)\.[A-Z][A-Za-z0-9]*\((?:&[\w.]+, )?"([a-z][a-z0-9-]*)"`)

// sourceFlags reads the flags a program defines from its Go source.
func sourceFlags(t *testing.T, dir string) map[string]bool {
	files, _ := filepath.Glob(filepath.Join("../..", dir, "*.go"))
	flags := map[string]bool{"help": true, "h": true}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range sourceFlagRE.FindAllStringSubmatch(string(b), -1) {
			flags[m[1]] = true
		}
	}
	if len(flags) == 2 {
		t.Errorf("found no flag definitions in %s", dir)
	}
	return flags
}

// otherProgram reports whether a prose span is a command line of another
// program: its first word is neither a flag nor a namecast command.
func otherProgram(span string) bool {
	words := strings.Fields(span)
	if len(words) < 2 || strings.HasPrefix(words[0], "-") {
		return false
	}
	for _, c := range commands() {
		if c.name == words[0] {
			return false
		}
	}
	return true
}
