package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	os.Exit(c.run(os.Args[1:]))
}

// cli is one run of the binary: where it reads and writes, so tests can run
// commands in-process.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	// ctx, when set, replaces cancellation on SIGINT/SIGTERM (tests).
	ctx context.Context
	// addr is the agent the last client was built for, for error messages.
	addr string
}

// command is one top-level command. run returns an error that exit turns
// into a message and an exit code.
type command struct {
	name, args, summary, group string
	run                        func(c *cli, args []string) error
}

// commands is a function rather than a variable: help refers to the table
// and the table refers to help.
func commands() []command {
	return []command{
		{"agent", "[flags]", "run an agent beside this host's processes", "Agent", func(c *cli, args []string) error { return exitCode(runAgentTo(c.stdout, c.stderr, args)) }},
		{"members", "", "list the cluster's members", "Queries", runMembers},
		{"topics", "", "list the topics that have a route, with their brokers and queues", "Queries", runTopics},
		{"route", "TOPIC", "show a topic's route: brokers and queues", "Queries", runRoute},
		{"clusters", "", "show the RocketMQ cluster table", "Queries", runClusters},
		{"services", "[IFACE]", "list interfaces with their providers, or one interface's URLs", "Queries", runServices},
		{"apps", "[APP]", "list Dubbo 3 applications, or one application's instances", "Queries", runApps},
		{"watch", "route|topics|services|members|apps", "print a view again every time it changes", "Queries", runWatch},
		{"register", "broker|url|instance", "register a broker (JSON file), a service URL or a Dubbo 3 instance", "Changes", runRegister},
		{"unregister", "broker|url|instance", "withdraw a broker, a service URL or a Dubbo 3 instance", "Changes", runUnregister},
		{"join", "ADDR...", "join the cluster through members at ADDR", "Changes", runJoin},
		{"leave", "", "make the agent leave the cluster and exit", "Changes", runLeave},
		{"keygen", "", "print a new gossip encryption key", "Keys and build", runKeygen},
		{"keys", "list|install|use|remove", "manage the cluster's gossip keyring", "Keys and build", runKeys},
		{"version", "", "print the version", "Keys and build", runVersion},
	}
}

func lookup(name string) (command, bool) {
	for _, cmd := range commands() {
		if cmd.name == name {
			return cmd, true
		}
	}
	return command{}, false
}

func (c *cli) run(args []string) int {
	if len(args) == 0 {
		c.usage(c.stderr)
		return 2
	}
	switch name := args[0]; name {
	case "help", "-h", "-help", "--help":
		if name == "help" && len(args) > 1 {
			return c.help(args[1])
		}
		c.usage(c.stdout)
		return 0
	case "-v", "-version", "--version":
		return c.exit("version", runVersion(c, nil))
	default:
		cmd, ok := lookup(name)
		if !ok {
			return c.unknown(name)
		}
		return c.exit(name, cmd.run(c, args[1:]))
	}
}

// help prints one command's usage: the same as the command's --help.
func (c *cli) help(name string) int {
	cmd, ok := lookup(name)
	if !ok {
		return c.unknown(name)
	}
	return c.exit(name, cmd.run(c, []string{"--help"}))
}

func (c *cli) unknown(name string) int {
	var names []string
	for _, cmd := range commands() {
		names = append(names, cmd.name)
	}
	if strings.HasPrefix(name, "-") {
		fmt.Fprintf(c.stderr, "namecast: flag %s before a command: flags go after it, as in `namecast members --http ADDR`\n", name)
	} else {
		fmt.Fprintf(c.stderr, "namecast: unknown command %q\n", name)
	}
	fmt.Fprintf(c.stderr, "Commands: %s.\nRun 'namecast --help' for usage.\n", strings.Join(names, ", "))
	return 2
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprint(w, `Usage: namecast COMMAND [ARGS] [FLAGS]

namecast is a gossip-based route registry for RocketMQ and Dubbo: an agent
runs beside every process, and these commands talk to the local agent.
`)
	width := 0
	for _, cmd := range commands() {
		width = max(width, len(cmd.name)+1+len(cmd.args))
	}
	group := ""
	for _, cmd := range commands() {
		if cmd.group != group {
			group = cmd.group
			fmt.Fprintf(w, "\n%s:\n", group)
		}
		fmt.Fprintf(w, "  %-*s   %s\n", width, cmd.name+" "+cmd.args, cmd.summary)
	}
	fmt.Fprint(w, `
Client commands take --http ADDR (default $NAMECAST_HTTP_ADDR, else
127.0.0.1:7947), --token TOKEN (default $NAMECAST_HTTP_TOKEN) for agents
that require one, and --json for JSON output.

Run 'namecast help COMMAND' for a command's arguments and flags.
`)
}

// context is what client calls run under: cancelled by SIGINT or SIGTERM,
// so an interrupted watch or blocking call ends cleanly. It is made per
// command, not in main, so `namecast agent` keeps its own signal handling.
func (c *cli) context() (context.Context, context.CancelFunc) {
	if c.ctx != nil {
		return context.WithCancel(c.ctx)
	}
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
