package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/namecast/namecast/client"
)

// usageError is a command used wrongly: exit code 2, with a pointer to help.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// exitStatus carries an exit code decided elsewhere (runAgent).
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func exitCode(n int) error {
	if n == 0 {
		return nil
	}
	return exitStatus(n)
}

// newFlagSet makes a command's flag set. Its usage is "Usage: namecast
// name synopsis", the description, then the flags.
func newFlagSet(name, synopsis, description string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: namecast %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(description))
		printFlags(fs)
	}
	return fs
}

// printFlags is flag.PrintDefaults with the two-dash spelling users type.
func printFlags(fs *flag.FlagSet) {
	w := fs.Output()
	first := true
	fs.VisitAll(func(fl *flag.Flag) {
		if first {
			fmt.Fprint(w, "\nFlags:\n")
			first = false
		}
		arg, usage := flag.UnquoteUsage(fl)
		if _, ok := fl.Value.(durationValue); ok && arg == "value" {
			arg = "duration"
		}
		fmt.Fprintf(w, "  --%s", fl.Name)
		if arg != "" {
			fmt.Fprintf(w, " %s", arg)
		}
		fmt.Fprintf(w, "\n      %s", usage)
		switch fl.DefValue {
		case "", "0", "0s", "false":
		default:
			fmt.Fprintf(w, " (default %s)", fl.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// parse parses args allowing flags before, between and after positional
// arguments (flag stops at the first positional; this resumes after it),
// and returns the positionals. "--" ends flags. --help prints the usage to
// stdout and returns flag.ErrHelp; a bad flag is a usageError.
func (c *cli) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard) // errors are reported once, by exit
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(c.stdout)
			fs.Usage()
			return nil, flag.ErrHelp
		}
		if err != nil {
			return nil, usagef("%v", err)
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// noArgs parses the flags of a command that takes no positional arguments.
func (c *cli) noArgs(fs *flag.FlagSet, args []string) error {
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q: %s takes flags only", pos[0], fs.Name())
	}
	return nil
}

// clientFlags are the flags every client command takes.
type clientFlags struct {
	http, token string
	json        bool
}

func (f *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.http, "http", "", "agent HTTP API `address`, or a port on 127.0.0.1 (default $NAMECAST_HTTP_ADDR, else 127.0.0.1:7947)")
	fs.StringVar(&f.token, "token", "", "`token` for agents started with --http-token (default $NAMECAST_HTTP_TOKEN)")
	fs.BoolVar(&f.json, "json", false, "print JSON instead of a table")
}

// client builds the API client and remembers its address for messages.
func (c *cli) client(f *clientFlags) (*client.Client, error) {
	cl, err := client.NewClient(client.Config{Address: f.http, Token: f.token})
	if err != nil {
		return nil, usagef("--http: %v", err)
	}
	c.addr = cl.Address()
	return cl, nil
}

// subcommand is one word of a command such as register (broker, url).
type subcommand struct {
	name string
	run  func(c *cli, args []string) error
}

// dispatch runs the subcommand args[0] of the command name.
func (c *cli) dispatch(name, description string, subs []subcommand, args []string) error {
	names := make([]string, len(subs))
	for i, sub := range subs {
		names[i] = sub.name
	}
	if len(args) == 0 {
		return usagef("%s what? Use one of: %s", name, strings.Join(names, ", "))
	}
	for _, sub := range subs {
		if sub.name == args[0] {
			return sub.run(c, args[1:])
		}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(c.stdout, "Usage: namecast %s %s ...\n\n%s\n\nRun 'namecast %s SUBCOMMAND --help' for the flags of each.\n",
			name, strings.Join(names, "|"), strings.TrimSpace(description), name)
		return flag.ErrHelp
	}
	return usagef("unknown %s subcommand %q: use one of: %s", name, args[0], strings.Join(names, ", "))
}

// call connects to the agent as f says and runs fn with a context that
// ends on SIGINT or SIGTERM: the tail every client command shares.
func (c *cli) call(f *clientFlags, fn func(ctx context.Context, cl *client.Client) error) error {
	cl, err := c.client(f)
	if err != nil {
		return err
	}
	ctx, cancel := c.context()
	defer cancel()
	return fn(ctx, cl)
}

// durationValue is a duration flag whose error says what a duration looks
// like; flag.Duration's says only "parse error".
type durationValue struct{ d *time.Duration }

// durationFlag defines a duration flag, as fs.Duration does.
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	d := value
	fs.Var(durationValue{&d}, name, usage)
	return &d
}

func (v durationValue) String() string {
	if v.d == nil {
		return ""
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a number with a unit, such as 30s, 500ms or 2m")
	}
	*v.d = d
	return nil
}
