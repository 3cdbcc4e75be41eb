package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/namecast/namecast/client"
)

const watchHelp = `Prints a view, then prints it again every time it changes, until
interrupted. It follows the agent with blocking queries, so a change shows
within moments and an idle watch costs nothing. If the agent goes away the
watch says so on stderr and retries with backoff.

  namecast watch route TopicTest
  namecast watch topics
  namecast watch services com.foo.BarService [--category providers]
  namecast watch members
  namecast watch apps [APP]

With --json each version is one line of JSON.`

func runWatch(c *cli, args []string) error {
	return c.dispatch("watch", watchHelp, []subcommand{
		{"route", runWatchRoute}, {"topics", runWatchTopics}, {"services", runWatchServices}, {"members", runWatchMembers},
		{"apps", runWatchApps},
	}, args)
}

func runWatchRoute(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("watch route", "TOPIC [flags]", "Prints TOPIC's route on every change.")
	f.register(fs)
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one TOPIC, got %d arguments", len(pos))
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		return watchEnded(cl.WatchTopicRoute(ctx, pos[0], follow(c, &f, "route of "+pos[0], func(r client.TopicRoute) {
			printRoute(c.stdout, r)
		})))
	})
}

func runWatchTopics(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("watch topics", "[flags]", "Prints the topics, as the topics command does, on every change.")
	f.register(fs)
	if err := c.noArgs(fs, args); err != nil {
		return err
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		return watchEnded(cl.WatchTopicSummaries(ctx, follow(c, &f, "topics", func(ts []client.TopicSummary) {
			printTopics(c.stdout, ts)
		})))
	})
}

func runWatchServices(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("watch services", "[IFACE] [flags]", "Prints IFACE's URLs, a row each, on every change; without IFACE, the interfaces as the services command lists them.")
	f.register(fs)
	category := fs.String("category", client.CategoryProviders, "URL `category` to follow")
	pos, err := c.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("want at most one IFACE, got %d arguments", len(pos))
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		if len(pos) == 0 {
			return watchEnded(cl.WatchServiceSummaries(ctx, follow(c, &f, "services", func(s []client.ServiceSummary) {
				printServices(c.stdout, s)
			})))
		}
		return watchEnded(cl.WatchURLs(ctx, pos[0], *category, follow(c, &f, *category+" of "+pos[0], func(s []string) {
			printURLs(c.stdout, s)
		})))
	})
}

func runWatchApps(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("watch apps", "[APP] [flags]", "Prints APP's instances on every change; without APP, the list of applications.")
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
			return watchEnded(cl.WatchApps(ctx, follow(c, &f, "applications", func(apps []client.App) { printApps(c.stdout, apps) })))
		}
		return watchEnded(cl.WatchApp(ctx, pos[0], follow(c, &f, "application "+pos[0], func(d client.AppDetail) { printApp(c.stdout, d) })))
	})
}

func runWatchMembers(c *cli, args []string) error {
	var f clientFlags
	fs := newFlagSet("watch members", "[flags]", "Prints the member list on every change.")
	f.register(fs)
	if err := c.noArgs(fs, args); err != nil {
		return err
	}
	return c.call(&f, func(ctx context.Context, cl *client.Client) error {
		return watchEnded(cl.WatchMembers(ctx, follow(c, &f, "members", func(ms []client.Member) {
			printMembers(c.stdout, ms)
		})))
	})
}

// follow returns the callback of a Watch method: each version is printed
// as one JSON line with --json, else as a timestamped heading and a table.
func follow[T any](c *cli, f *clientFlags, what string, print func(T)) func(T, error) {
	var failing string
	return func(v T, err error) {
		if err != nil {
			c.watchFailed(err, &failing)
			return
		}
		failing = ""
		if f.json {
			b, _ := json.Marshal(v)
			fmt.Fprintf(c.stdout, "%s\n", b)
			return
		}
		fmt.Fprintf(c.stdout, "# %s %s\n", time.Now().Format(time.TimeOnly), what)
		print(v)
		fmt.Fprintln(c.stdout)
	}
}

// watchFailed notes on stderr that the watch is waiting or retrying. Each
// failure is printed once, not on every retry, so an agent that stays down
// does not fill the terminal. A refusal that ends the watch is left to exit.
func (c *cli) watchFailed(err error, last *string) {
	var se *client.StatusError
	if errors.As(err, &se) && se.Code >= 400 && se.Code < 500 && se.Code != 404 {
		return
	}
	msg := c.explain(err)
	if msg == *last {
		return
	}
	*last = msg
	next := "retrying"
	if client.IsNotFound(err) {
		next = "waiting for it"
	}
	fmt.Fprintf(c.stderr, "%s %s (%s)\n", time.Now().Format(time.TimeOnly), msg, next)
}

// watchEnded maps the end of a watch to the command's result: being
// interrupted is how a watch normally ends.
func watchEnded(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
