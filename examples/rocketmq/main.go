// Command rocketmq shows an unmodified RocketMQ Go client
// (github.com/apache/rocketmq-client-go/v2 v2.1.2) using the namecast agent
// beside it as its NameServer. Copy the client part into your program: the
// only change from a NameServer deployment is the address, 127.0.0.1:9876,
// served by the local agent instead of a central NameServer.
//
//	go run . -agent -demo-broker     # start an agent in-process, fake a broker
//	go run .                         # use the agent already running here
//
// Caveats of the v2.1.2 client (docs/protocols/rocketmq-remoting.md §4.5):
//   - Always pass a resolver (WithResolver / WithNsResolver): the default
//     one asks an HTTP endpoint on jmenv.tbsite.net, and the admin client
//     without one crashes.
//   - Use a literal IP ("127.0.0.1:9876"); "localhost:9876" fails the
//     client's address check.
//   - Clients in one process share state per instance name: give each
//     producer/consumer its own (WithInstance / WithInstanceName).
//   - The client logs a lot; rlog.SetLogLevel("error") quiets it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
)

func main() {
	nameServer := flag.String("nameserver", "127.0.0.1:9876", "the local agent's RocketMQ address (a literal IP)")
	startAgent := flag.Bool("agent", false, "start a namecast agent in this process, serving -nameserver")
	demoBroker := flag.Bool("demo-broker", false, "register a placeholder broker with -topic, for trying this without a RocketMQ broker")
	topic := flag.String("topic", "TopicTest", "topic to look up and subscribe to")
	wait := flag.Bool("wait", false, "keep running (and the agent serving) until interrupted")
	flag.Parse()
	rlog.SetLogLevel("error")

	if *startAgent {
		a, err := runAgent(*nameServer)
		if err != nil {
			log.Fatalf("starting the agent: %v", err)
		}
		defer a.Shutdown()
	}
	if *demoBroker {
		broker, err := registerDemoBroker(*nameServer, *topic)
		if err != nil {
			log.Fatalf("registering the demo broker: %v", err)
		}
		defer broker.Close() // closing the connection unregisters the broker
	}
	c, err := useClient(*nameServer, *topic)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Shutdown()
	if *wait {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt)
		fmt.Println("serving; interrupt to stop")
		<-ch
	}
}

// consumerGroup is the example consumer's group.
const consumerGroup = "namecast-example"

// useClient is what a RocketMQ application does, unchanged but for the
// NameServer address. It returns the started push consumer; the caller
// shuts it down when it is done consuming.
func useClient(nameServer, topic string) (rocketmq.PushConsumer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resolver := primitive.NewPassthroughResolver([]string{nameServer})

	adm, err := admin.NewAdmin(admin.WithResolver(resolver))
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	defer adm.Close()
	topics, err := adm.FetchAllTopicList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing topics via %s: %w", nameServer, err)
	}
	fmt.Printf("topics: %v\n", topics.TopicList)
	queues, err := adm.FetchPublishMessageQueues(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("route of %s via %s: %w (is a broker with this topic registered with an agent of the cluster?)", topic, nameServer, err)
	}
	for _, q := range queues {
		fmt.Printf("writable queue: %s\n", q)
	}

	c, err := rocketmq.NewPushConsumer(
		consumer.WithGroupName(consumerGroup),
		consumer.WithNsResolver(resolver),
		consumer.WithInstance("namecast-example-"+strconv.Itoa(os.Getpid())),
	)
	if err != nil {
		return nil, fmt.Errorf("push consumer: %w", err)
	}
	err = c.Subscribe(topic, consumer.MessageSelector{}, func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			fmt.Printf("received %s\n", m.Body)
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	// Start looks the topic up through the NameServer and fails if it has
	// no route.
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("starting the consumer: %w", err)
	}
	fmt.Printf("push consumer started on %s\n", topic)
	return c, nil
}

// runAgent starts a single-member agent on loopback whose RocketMQ port is
// addr. Production agents run as `namecast agent --rocketmq 127.0.0.1:9876`.
func runAgent(addr string) (*agent.Agent, error) {
	cfg := agent.DevConfig()
	cfg.BindAddr, cfg.HTTPAddr, cfg.RocketMQAddr, cfg.ZooKeeperAddr, cfg.NacosAddr = "127.0.0.1:0", "127.0.0.1:0", addr, "off", "off"
	cfg.DNSAddr = "off"
	a, err := agent.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := a.Start(context.Background()); err != nil {
		return nil, err
	}
	return a, nil
}

// registerDemoBroker registers a broker the way a Java 5.x broker does,
// over the RocketMQ protocol, at a loopback address where nothing listens
// (the client looks routes up, and its calls to the broker fail fast).
func registerDemoBroker(nameServer, topic string) (*rocketmqtest.Client, error) {
	brokerAddr, err := unusedLoopbackAddr()
	if err != nil {
		return nil, err
	}
	c, err := rocketmqtest.Dial(nameServer)
	if err != nil {
		return nil, err
	}
	b := &rocketmqtest.Broker{Cluster: "DefaultCluster", Name: "demo-broker", Addr: brokerAddr,
		DataVersion: remoting.DataVersion{Counter: 1, Timestamp: time.Now().UnixMilli()},
		Topics:      map[string]remoting.TopicConfig{topic: rocketmqtest.Topic(topic, 4), "TBW102": rocketmqtest.Topic("TBW102", 8)}}
	if _, err := c.Register(b); err != nil {
		c.Close()
		return nil, err
	}
	fmt.Printf("registered demo broker %s at %s\n", b.Name, b.Addr)
	return c, nil
}

func unusedLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
