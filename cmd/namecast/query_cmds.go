package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/namecast/namecast/client"
	"github.com/namecast/namecast/dubbo"
)

func runMembers(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("members", "[flags]", "Lists the cluster's members as the agent sees them: alive, suspect,\nand the dead and departed it still remembers.")
	f.register(fs)
	if err := c.noArgs(fs, args); err != nil {
		return err
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		members, _, err := cl.Members(ctx, nil)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(c.stdout, members)
		}
		printMembers(c.stdout, members)
		return nil
	})
}

func printMembers(w io.Writer, members []client.Member) {
	members = slices.Clone(members)
	slices.SortFunc(members, func(a, b client.Member) int { return strings.Compare(a.Name, b.Name) })
	t := newTable(w, "NAME", "ADDR", "STATUS", "SINCE", "TAGS")
	for _, m := range members {
		var tags []string
		for _, k := range slices.Sorted(maps.Keys(m.Tags)) {
			tags = append(tags, k+"="+m.Tags[k])
		}
		t.row(m.Name, m.Addr, m.Status, ago(m.Since, time.Now()), orDash(strings.Join(tags, ",")))
	}
	t.flush()
}

func runTopics(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("topics", "[flags]", `Lists every topic some live broker serves: its clusters, brokers, queues
(read and write, summed over its brokers) and permissions.`)
	f.register(fs)
	if err := c.noArgs(fs, args); err != nil {
		return err
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		topics, _, err := cl.TopicSummaries(ctx, nil)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(c.stdout, map[string][]client.TopicSummary{"topics": topics})
		}
		printTopics(c.stdout, topics)
		return nil
	})
}

func printTopics(w io.Writer, topics []client.TopicSummary) {
	t := newTable(w, "TOPIC", "CLUSTERS", "BROKERS", "READ", "WRITE", "PERM")
	for _, s := range topics {
		perms := make([]string, len(s.Perms))
		for i, p := range s.Perms {
			perms[i] = permString(p)
		}
		t.row(s.Topic, orDash(strings.Join(s.Clusters, ",")), orDash(strings.Join(s.Brokers, ",")), s.ReadQueues, s.WriteQueues,
			orDash(strings.Join(perms, ",")))
	}
	t.flush()
}

func runRoute(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("route", "TOPIC [flags]", `Shows where TOPIC's queues live, as RocketMQ clients receive it: one row per
broker address (nearest broker first), then each broker's queues.`)
	f.register(fs)
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TOPIC, got %d arguments", len(pos))
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		route, _, err := cl.TopicRoute(ctx, pos[0], nil)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(c.stdout, route)
		}
		printRoute(c.stdout, route)
		return nil
	})
}

// printRoute keeps the agent's broker order: it is nearest first.
func printRoute(w io.Writer, route client.TopicRoute) {
	t := newTable(w, "BROKER", "CLUSTER", "ID", "ADDR")
	for _, b := range route.BrokerDatas {
		for _, id := range slices.Sorted(maps.Keys(b.BrokerAddrs)) {
			t.row(b.BrokerName, b.Cluster, id, b.BrokerAddrs[id])
		}
	}
	t.flush()
	fmt.Fprintln(w)
	t = newTable(w, "BROKER", "READ", "WRITE", "PERM")
	for _, q := range route.QueueDatas {
		t.row(q.BrokerName, q.ReadQueueNums, q.WriteQueueNums, permString(q.Perm))
	}
	t.flush()
}

// permString spells permission bits as RocketMQ's PermName.perm2String
// does: R (read), W (write), X (inherit), "-" for each one missing.
func permString(perm int) string {
	b := []byte("---")
	if perm&client.PermRead != 0 {
		b[0] = 'R'
	}
	if perm&client.PermWrite != 0 {
		b[1] = 'W'
	}
	if perm&client.PermInherit != 0 {
		b[2] = 'X'
	}
	return string(b)
}

func runClusters(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("clusters", "[flags]", "Shows the RocketMQ cluster table: every broker address by cluster and\nbroker name.")
	f.register(fs)
	if err := c.noArgs(fs, args); err != nil {
		return err
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		info, _, err := cl.Clusters(ctx, nil)
		if err != nil {
			return err
		}
		if f.json {
			return printJSON(c.stdout, info)
		}
		brokers := slices.Collect(maps.Values(info.BrokerAddrTable))
		slices.SortFunc(brokers, func(a, b client.BrokerData) int {
			return strings.Compare(a.Cluster+"\x00"+a.BrokerName, b.Cluster+"\x00"+b.BrokerName)
		})
		t := newTable(c.stdout, "CLUSTER", "BROKER", "ID", "ADDR")
		for _, b := range brokers {
			for _, id := range slices.Sorted(maps.Keys(b.BrokerAddrs)) {
				t.row(b.Cluster, b.BrokerName, id, b.BrokerAddrs[id])
			}
		}
		t.flush()
		return nil
	})
}

func runServices(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("services", "[IFACE] [flags]", `Without IFACE, lists every interface with providers or consumers: its
interface-level providers and consumers, the Dubbo 3 application instances
that export it, their applications and versions. With IFACE, lists that
interface's URLs in one category, one row per URL (--urls: the URLs alone,
one per line).`)
	f.register(fs)
	category := fs.String("category", client.CategoryProviders, "URL `category` to list: providers, consumers, routers or configurators")
	bare := fs.Bool("urls", false, "with IFACE, print the URLs alone, one per line")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("want at most one IFACE, got %d arguments", len(pos))
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		if len(pos) == 0 {
			services, _, err := cl.ServiceSummaries(ctx, nil)
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(c.stdout, map[string][]client.ServiceSummary{"services": services})
			}
			printServices(c.stdout, services)
			return nil
		}
		urls, _, err := cl.URLs(ctx, pos[0], *category, nil)
		if err != nil {
			return err
		}
		switch {
		case f.json:
			return printJSON(c.stdout, map[string][]string{"urls": urls})
		case *bare:
			printLines(c.stdout, urls)
		default:
			printURLs(c.stdout, urls)
		}
		return nil
	})
}

func printServices(w io.Writer, services []client.ServiceSummary) {
	t := newTable(w, "INTERFACE", "PROVIDERS", "CONSUMERS", "APP-INSTANCES", "APPLICATIONS", "VERSIONS")
	for _, s := range services {
		t.row(s.Interface, s.Providers, s.Consumers, s.AppInstances, orDash(strings.Join(s.Applications, ",")), orDash(strings.Join(s.Versions, ",")))
	}
	t.flush()
}

// printURLs is one row per Dubbo URL, the columns Dubbo Admin shows; a
// URL that does not parse is printed whole in the ADDRESS column.
func printURLs(w io.Writer, urls []string) {
	t := newTable(w, "ADDRESS", "PROTOCOL", "APPLICATION", "VERSION", "GROUP", "WEIGHT")
	for _, raw := range urls {
		u, err := dubbo.Parse(raw)
		if err != nil {
			t.row(raw, "-", "-", "-", "-", "-")
			continue
		}
		t.row(orDash(u.Address()), u.Protocol(), orDash(u.Param("application", "")), orDash(u.Version()), orDash(u.Group()),
			u.Param("weight", "100"))
	}
	t.flush()
}
