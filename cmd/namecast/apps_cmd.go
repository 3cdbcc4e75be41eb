package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
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

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func runRegisterInstance(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("register instance", "APP HOST:PORT [flags]", `Registers an instance of a Dubbo 3 application (application-level
discovery): the /services/APP/HOST:PORT znode Curator and dubbo-go read.
With --interface, the agent also maps each interface to APP and writes the
application's metadata, so Dubbo 3 consumers can call the instance.`)
	f.register(fs)
	ttl := durationFlag(fs, "ttl", 0, "withdraw unless registered again within this `duration`, such as 30s")
	var ifaces, meta stringList
	fs.Var(&ifaces, "interface", "an `interface` the instance exports (repeatable)")
	fs.Var(&meta, "meta", "a `key=value` of the instance's metadata (repeatable)")
	protocol := fs.String("protocol", "", "the interfaces' `protocol` (default dubbo)")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want APP HOST:PORT, got %s", plural(len(pos), "argument"))
	}
	host, portStr, err := net.SplitHostPort(pos[1])
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil {
		return usagef("%q must be HOST:PORT", pos[1])
	}
	reg := client.InstanceRegistration{Address: host, Port: port, Interfaces: ifaces, Protocol: *protocol}
	for _, kv := range meta {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return usagef("--meta %q must be key=value", kv)
		}
		if reg.Metadata == nil {
			reg.Metadata = map[string]string{}
		}
		reg.Metadata[k] = v
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		in, err := cl.RegisterInstance(ctx, pos[0], reg, *ttl)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(c.stdout, in)
		}
		expires := "with the agent"
		if *ttl > 0 {
			expires = "unless renewed within " + ttl.String()
		}
		fmt.Fprintf(c.stdout, "registered instance %s of %s (revision %s), %s\n", in.ID, in.App, orDash(in.Revision), expires)
		return nil
	})
}

func runUnregisterInstance(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("unregister instance", "APP ID [flags]", "Withdraws an instance registered with this agent over HTTP (ID: HOST:PORT by default).")
	f.register(fs)
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want APP ID, got %s", plural(len(pos), "argument"))
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		if err := cl.UnregisterInstance(ctx, pos[0], pos[1]); err != nil {
			return err
		}
		return c.done(f.json, "unregistered instance %s of %s\n", pos[1], pos[0])
	})
}
