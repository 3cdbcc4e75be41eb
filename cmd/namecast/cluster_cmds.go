package main

import (
	"context"
	"fmt"

	"github.com/namecast/namecast/client"
)

func runJoin(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("join", "ADDR... [flags]", "Asks the agent to join the cluster through the members at the gossip\naddresses ADDR (host:port).")
	f.register(fs)
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("want at least one ADDR to join through")
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		n, err := cl.Join(ctx, pos...)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(c.stdout, map[string]int{"joined": n})
		}
		_, err = fmt.Fprintf(c.stdout, "joined %d of %d\n", n, len(pos))
		return err
	})
}

func runLeave(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("leave", "[flags]", "Makes the agent leave the cluster gracefully: its registrations are\nwithdrawn everywhere, then it exits.")
	f.register(fs)
	if err := c.noArgs(fs, args); err != nil {
		return err
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		if err := cl.Leave(ctx); err != nil {
			return err
		}
		if f.json {
			return printJSON(c.stdout, map[string]bool{"left": true})
		}
		_, err := fmt.Fprintf(c.stdout, "the agent at %s is leaving the cluster and will exit\n", c.addr)
		return err
	})
}
