package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/namecast/namecast/client"
	"github.com/namecast/namecast/dubbo"
)

const registerHelp = `Registers with the agent, which owns the registration from then on: it
lasts as long as the agent (or until --ttl passes without a renewal) and
is gossiped to every member.

  namecast register broker --file broker.json    (- reads stdin)
  namecast register url 'dubbo://10.0.0.5:20880/com.foo.Bar?version=1.0.0'
  namecast register instance greeter 10.0.0.5:20880 --interface com.foo.Bar`

func runRegister(c *cli, args []string) error {
	return c.dispatch("register", registerHelp, []subcommand{{"broker", runRegisterBroker}, {"url", runRegisterURL},
		{"instance", runRegisterInstance}}, args)
}

func runRegisterBroker(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("register broker", "--file FILE [flags]", `Registers a RocketMQ broker and its topics from a JSON file in the shape of
PUT /v1/brokers, replacing its previous registration:

  {"cluster": "DefaultCluster", "brokerName": "broker-a", "brokerId": 0,
   "addr": "10.0.0.5:10911", "haAddr": "10.0.0.5:10912",
   "topics": {"TopicTest": {"readQueueNums": 4, "writeQueueNums": 4, "perm": 6}},
   "ttl": "120s"}`)
	f.register(fs)
	file := fs.String("file", "", "JSON `file` with the registration, - for stdin")
	ttl := durationFlag(fs, "ttl", 0, "withdraw unless renewed within this `duration`; overrides the file's ttl")
	if err := c.noArgs(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return usagef("--file is required: the registration as JSON (- reads stdin)")
	}
	reg, err := c.readBroker(*file)
	if err != nil {
		return err
	}
	if *ttl != 0 {
		reg.TTL = *ttl
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		res, err := cl.RegisterBroker(ctx, reg)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(c.stdout, res)
		}
		fmt.Fprintf(c.stdout, "registered broker %s id %d in cluster %s with %s\n", reg.BrokerName, reg.BrokerID, reg.Cluster, plural(len(reg.Topics), "topic"))
		// A slave learns its master here, as from the NameServer's answer.
		if res.MasterAddr != "" {
			fmt.Fprintf(c.stdout, "master %s, HA server %s\n", res.MasterAddr, orDash(res.HAServerAddr))
		}
		return nil
	})
}

func (c *cli) readBroker(file string) (client.BrokerRegistration, error) {
	var (
		b   []byte
		err error
	)
	if file == "-" {
		b, err = io.ReadAll(c.stdin)
	} else {
		b, err = os.ReadFile(file)
	}
	if err != nil {
		return client.BrokerRegistration{}, fmt.Errorf("reading the registration: %w", err)
	}
	var reg client.BrokerRegistration
	if err := json.Unmarshal(b, &reg); err != nil {
		return reg, fmt.Errorf("%s is not a broker registration: %v (see 'namecast help register')", displayName(file), err)
	}
	return reg, nil
}

func runRegisterURL(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("register url", "URL [flags]", `Registers a Dubbo-style service URL. Its category parameter files it
(providers when absent). Without --ttl it stays until the agent leaves; with
one it must be registered again within the ttl or it expires. A URL with
dynamic=false (routers, configurators) is a cluster-wide rule instead: it
stays, on every agent, until deleted, and takes no --ttl.`)
	f.register(fs)
	ttl := durationFlag(fs, "ttl", 0, "withdraw unless registered again within this `duration`, such as 30s")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one URL, got %d arguments (quote URLs with & in them)", len(pos))
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		res, err := cl.RegisterURL(ctx, pos[0], *ttl)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(c.stdout, res)
		}
		fmt.Fprintf(c.stdout, "registered %s\n", res.URL)
		t := newTable(c.stdout, "INTERFACE", "CATEGORY", "EXPIRES")
		expires := "with the agent"
		switch u, err := dubbo.Parse(res.URL); {
		case err == nil && !u.Dynamic():
			expires = "until deleted (dynamic=false: a cluster-wide rule)"
		case *ttl > 0:
			expires = "unless renewed within " + ttl.String()
		}
		t.row(res.Interface, res.Category, expires)
		t.flush()
		return nil
	})
}

const unregisterHelp = `Withdraws a registration from the agent it was registered with.

  namecast unregister broker DefaultCluster broker-a 0
  namecast unregister url 'dubbo://10.0.0.5:20880/com.foo.Bar?version=1.0.0'
  namecast unregister instance greeter 10.0.0.5:20880`

func runUnregister(c *cli, args []string) error {
	return c.dispatch("unregister", unregisterHelp, []subcommand{{"broker", runUnregisterBroker}, {"url", runUnregisterURL},
		{"instance", runUnregisterInstance}}, args)
}

func runUnregisterBroker(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("unregister broker", "CLUSTER BROKERNAME BROKERID [flags]", "Withdraws one broker registered with this agent.")
	f.register(fs)
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 3 {
		return usagef("want CLUSTER BROKERNAME BROKERID, got %s", plural(len(pos), "argument"))
	}
	id, err := strconv.ParseInt(pos[2], 10, 64)
	if err != nil || id < 0 {
		return usagef("BROKERID %q must be a non-negative integer (0 is the master)", pos[2])
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		if err := cl.UnregisterBroker(ctx, pos[0], pos[1], id); err != nil {
			return err
		}
		return c.done(f.json, "unregistered broker %s id %d in cluster %s\n", pos[1], id, pos[0])
	})
}

func runUnregisterURL(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("unregister url", "URL [flags]", "Withdraws one URL registered with this agent; any spelling of it with\nthe same canonical form works.")
	f.register(fs)
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one URL, got %d arguments (quote URLs with & in them)", len(pos))
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		if err := cl.UnregisterURL(ctx, pos[0]); err != nil {
			return err
		}
		return c.done(f.json, "unregistered %s\n", pos[0])
	})
}

// done reports a deletion: the agent's own answer in JSON, else a sentence.
func (c *cli) done(asJSON bool, format string, args ...any) error {
	if asJSON {
		return printJSON(c.stdout, map[string]bool{"deleted": true})
	}
	_, err := fmt.Fprintf(c.stdout, format, args...)
	return err
}

// plural is "1 topic", "2 topics".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func displayName(file string) string {
	if file == "-" {
		return "stdin"
	}
	return file
}
