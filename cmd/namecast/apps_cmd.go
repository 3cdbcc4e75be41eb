package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/namecast/namecast/client"
)

func runApps(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("apps", "[APP] [flags]", `Without APP, lists every application of Dubbo 3's application-level
discovery: its instance count and the interfaces mapped to it. With APP,
lists its instances: address, revision, and the agent that holds each.`)
	f.register(fs)
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("want at most one APP, got %d arguments", len(pos))
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		if len(pos) == 0 {
			apps, _, err := cl.Apps(ctx, nil)
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(c.stdout, map[string][]client.App{"apps": apps})
			}
			printApps(c.stdout, apps)
			return nil
		}
		d, _, err := cl.App(ctx, pos[0], nil)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(c.stdout, d)
		}
		printApp(c.stdout, d)
		return nil
	})
}

func printApps(w io.Writer, apps []client.App) {
	t := newTable(w, "APP", "INSTANCES", "INTERFACES")
	for _, a := range apps {
		t.row(a.Name, a.Instances, orDash(strings.Join(a.Interfaces, ",")))
	}
	t.flush()
}

// printApp shows an application's instances, then the interfaces its
// mapping names.
func printApp(w io.Writer, d client.AppDetail) {
	t := newTable(w, "ID", "ADDR", "REVISION", "AGENT")
	for _, in := range d.Instances {
		t.row(in.ID, fmt.Sprintf("%s:%d", in.Address, in.Port), orDash(in.Revision), orDash(in.Agent))
	}
	t.flush()
	fmt.Fprintf(w, "\ninterfaces: %s\n", orDash(strings.Join(d.Interfaces, ", ")))
}
