// Command dubbo-consumer subscribes to a Dubbo service through the namecast
// agent beside it and prints every notification, as a Dubbo consumer's
// registry directory receives them: the full list of one category each
// time, and "none" when a category is empty (Dubbo's empty:// URL).
//
//	go run ./examples/dubbo-consumer --http 127.0.0.1:7947 --interface com.example.Greeter
//
// Start and stop examples/dubbo-provider (on this agent or any other) to
// watch providers come and go; kill the agent a provider registered with
// and its URL goes once the cluster declares that agent dead. With --cache
// the last lists are kept in a file and printed even if the agent is down
// when this starts. Ctrl-C exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/namecast/namecast/client"
	"github.com/namecast/namecast/dubbo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dubbo-consumer:", err)
		os.Exit(1)
	}
}

// run is the whole program, so that a test can run it against an
// in-process agent: it subscribes and prints until ctx is done.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("dubbo-consumer", flag.ContinueOnError)
	httpAddr := fs.String("http", "", "the agent's HTTP API (default $NAMECAST_HTTP_ADDR, else 127.0.0.1:7947)")
	iface := fs.String("interface", "com.example.Greeter", `service interface to follow ("*" for every service)`)
	categories := fs.String("category", "providers,routers,configurators", "categories to follow, a comma list")
	version := fs.String("version", "1.0.0", `service version ("*" for any)`)
	group := fs.String("group", "", `service group ("*" for any; none by default)`)
	cache := fs.String("cache", "", "file keeping the last lists, used while the agent is down")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := client.NewClient(client.Config{Address: *httpAddr})
	if err != nil {
		return err
	}
	reg, err := client.NewRegistry(c, client.RegistryOptions{
		CacheFile: *cache,
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		return err
	}
	defer reg.Close()

	sub := subscriptionURL(*iface, *categories, *version, *group)
	fmt.Fprintf(out, "subscribing to %s\n", sub)
	// check=false in sub: with the agent down and no cache, keep waiting
	// for it instead of failing.
	if err := reg.Subscribe(ctx, sub, &printer{out}); err != nil {
		return err
	}
	<-ctx.Done()
	return reg.Close()
}

// subscriptionURL is what a Dubbo consumer subscribes with: its own
// consumer URL, naming the categories it wants.
func subscriptionURL(iface, categories, version, group string) string {
	u := fmt.Sprintf("consumer://127.0.0.1/%s?application=dubbo-consumer-example&category=%s&check=false&interface=%s&side=consumer&version=%s",
		iface, categories, iface, version)
	if group != "" {
		u += "&group=" + group
	}
	return u
}

// printer prints each notification: a header naming the interface and
// category, then one URL a line.
type printer struct{ out io.Writer }

func (p *printer) Notify(urls []string) {
	first := dubbo.MustParse(urls[0])
	head := first.Interface() + " " + first.Category()
	if first.Protocol() == dubbo.EmptyProtocol {
		fmt.Fprintf(p.out, "%s: none\n", head)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d\n", head, len(urls))
	for _, u := range urls {
		fmt.Fprintf(&b, "  %s\n", u)
	}
	io.WriteString(p.out, b.String())
}
