// Command broker-producer plays both sides of RocketMQ routing through a
// namecast agent. A fake broker registers its topic route over the agent's
// HTTP API with a TTL and renews it every 30 s, as a RocketMQ broker
// re-registers with its NameServer; a "producer" follows the topic's route
// with the Go client and prints which broker and queue each message would
// go to.
//
//	go run ./examples/broker-producer --http 127.0.0.1:7947 --topic TopicTest
//
// --role broker and --role producer run one side each, say against two
// agents of one cluster. Ctrl-C unregisters the broker; a broker killed
// without unregistering is withdrawn when its TTL runs out, or as soon as
// the cluster declares its agent dead.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/namecast/namecast/client"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "broker-producer:", err)
		os.Exit(1)
	}
}

// run is the whole program, so that a test can run it against in-process
// agents: it runs the chosen roles until ctx is done.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("broker-producer", flag.ContinueOnError)
	httpAddr := fs.String("http", "", "the agent's HTTP API (default $NAMECAST_HTTP_ADDR, else 127.0.0.1:7947)")
	role := fs.String("role", "both", "broker, producer or both")
	topic := fs.String("topic", "TopicTest", "topic the broker serves and the producer sends to")
	b := broker{}
	fs.StringVar(&b.Cluster, "cluster", "DefaultCluster", "broker's cluster")
	fs.StringVar(&b.BrokerName, "broker-name", "broker-a", "broker's name")
	fs.StringVar(&b.Addr, "broker-addr", "127.0.0.1:10911", "address producers would send to")
	queues := fs.Int("queues", 4, "read and write queues of the topic")
	ttl := fs.Duration("ttl", 120*time.Second, "registration TTL (RocketMQ's broker expiry)")
	renew := fs.Duration("renew", 30*time.Second, "how often the broker registers again (RocketMQ's heartbeat)")
	messages := fs.Int("messages", 4, "messages the producer places on each route it learns")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *role != "both" && *role != "broker" && *role != "producer" {
		return fmt.Errorf("--role %q: want broker, producer or both", *role)
	}
	c, err := client.NewClient(client.Config{Address: *httpAddr})
	if err != nil {
		return err
	}
	b.Topics = map[string]topicConfig{*topic: {ReadQueueNums: *queues, WriteQueueNums: *queues, Perm: client.PermRead | client.PermWrite}}
	b.TTL = ttl.String()
	b.agent = agentURL(c.Address())
	b.out = out

	var wg sync.WaitGroup
	errs := make([]error, 2)
	if *role != "producer" {
		wg.Go(func() { errs[0] = b.run(ctx, *renew) })
	}
	if *role != "broker" {
		wg.Go(func() { errs[1] = produce(ctx, c, *topic, *messages, out) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// produce follows topic's route and, each time it changes, prints where
// the next messages would go.
func produce(ctx context.Context, c *client.Client, topic string, messages int, out io.Writer) error {
	err := c.WatchTopicRoute(ctx, topic, func(route client.TopicRoute, err error) {
		switch {
		case client.IsNotFound(err):
			fmt.Fprintf(out, "producer: no route for %s\n", topic)
		case err != nil:
			fmt.Fprintf(out, "producer: %v (asking again)\n", err)
		default:
			printSends(out, topic, route, messages)
		}
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// target is one message queue: a queue id on a broker's master.
type target struct {
	broker string
	queue  int
	addr   string
}

// writeQueues lists the queues a producer may send to, in the route's
// order (nearest broker first): RocketMQ sends only to writable queues on
// a broker's master (id 0).
func writeQueues(route client.TopicRoute) []target {
	masters := map[string]string{}
	for _, bd := range route.BrokerDatas {
		if addr, ok := bd.BrokerAddrs[0]; ok {
			masters[bd.BrokerName] = addr
		}
	}
	var out []target
	for _, qd := range route.QueueDatas {
		addr, ok := masters[qd.BrokerName]
		if !ok || qd.Perm&client.PermWrite == 0 {
			continue
		}
		for q := range qd.WriteQueueNums {
			out = append(out, target{qd.BrokerName, q, addr})
		}
	}
	return out
}

// printSends places messages round-robin over the write queues, as
// RocketMQ's default queue selector does.
func printSends(out io.Writer, topic string, route client.TopicRoute, messages int) {
	targets := writeQueues(route)
	if len(targets) == 0 {
		fmt.Fprintf(out, "producer: %s has a route but no writable queue\n", topic)
		return
	}
	fmt.Fprintf(out, "producer: %s has %d write queues on %d broker(s)\n", topic, len(targets), len(route.BrokerDatas))
	for i := range messages {
		t := targets[i%len(targets)]
		fmt.Fprintf(out, "producer: message %d -> %s queue %d at %s\n", i, t.broker, t.queue, t.addr)
	}
}
