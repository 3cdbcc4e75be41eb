// Command dubbo-provider publishes a Dubbo provider URL through the namecast
// agent beside it and keeps it published until interrupted, as a Dubbo
// provider keeps its registration while it serves:
//
//	go run ./examples/dubbo-provider --http 127.0.0.1:7947 --interface com.example.Greeter --addr 127.0.0.1:20880
//
// It serves nothing on --addr; the point is the registration. It uses
// client.Registry, which registers with a TTL it renews (so the URL goes
// if this process is killed while the agent lives on), retries while the
// agent is unreachable, and registers again when the agent restarts.
// Ctrl-C unregisters and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/namecast/namecast/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dubbo-provider:", err)
		os.Exit(1)
	}
}

// run is the whole program, so that a test can run it against an
// in-process agent: it registers, then waits for ctx and unregisters.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("dubbo-provider", flag.ContinueOnError)
	httpAddr := fs.String("http", "", "the agent's HTTP API (default $NAMECAST_HTTP_ADDR, else 127.0.0.1:7947)")
	iface := fs.String("interface", "com.example.Greeter", "service interface to provide")
	addr := fs.String("addr", "127.0.0.1:20880", "host:port consumers would call")
	version := fs.String("version", "1.0.0", "service version")
	group := fs.String("group", "", "service group (none by default)")
	ttl := fs.Duration("ttl", 30*time.Second, "registration TTL, renewed every third of it (0: as long as the agent lives)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := client.NewClient(client.Config{Address: *httpAddr})
	if err != nil {
		return err
	}
	reg, err := client.NewRegistry(c, client.RegistryOptions{
		TTL:    *ttl,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
	})
	if err != nil {
		return err
	}
	defer reg.Close()

	provider := providerURL(*addr, *iface, *version, *group)
	err = reg.Register(ctx, provider)
	var refused *client.StatusError
	switch {
	case errors.As(err, &refused):
		return err // the agent will never take this URL
	case err != nil:
		// The registry keeps trying in the background, as Dubbo's
		// FailbackRegistry does; there is nothing else to do meanwhile.
		fmt.Fprintf(out, "not registered yet (%v); retrying in the background\n", err)
	default:
		fmt.Fprintf(out, "registered %s\n", provider)
	}
	<-ctx.Done()
	if err := reg.Close(); err != nil {
		return err
	}
	fmt.Fprintf(out, "unregistered %s\n", provider)
	return nil
}

// providerURL is the URL a Dubbo provider registers: its address, the
// interface as path, and the parameters consumers select and call by.
func providerURL(addr, iface, version, group string) string {
	q := url.Values{}
	q.Set("application", "dubbo-provider-example")
	q.Set("dubbo", "2.0.2")
	q.Set("interface", iface)
	q.Set("methods", "sayHello")
	q.Set("pid", strconv.Itoa(os.Getpid()))
	q.Set("side", "provider")
	q.Set("version", version)
	if group != "" {
		q.Set("group", group)
	}
	return "dubbo://" + addr + "/" + iface + "?" + q.Encode()
}
