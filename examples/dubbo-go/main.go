// Command dubbo-go is an unmodified dubbo-go v3.3.0 provider and consumer
// using the namecast agent beside them as their registry, through the
// address every Dubbo deployment already has: zookeeper://127.0.0.1:2181.
// There is no ZooKeeper ensemble: each agent answers the ZooKeeper protocol
// from the gossiped registry, so a provider registered through one agent
// is called by a consumer whose agent is another.
//
//	namecast agent --zookeeper 127.0.0.1:2181 &      # on every host
//	go run . -role provider -port 20000              # host 1
//	go run . -role consumer -name world              # host 2: "hello world, from 127.0.0.1:20000"
//
// dubbo-go 3.3 registers by application by default (Dubbo 3's
// application-level discovery: /services/{app}/{ip:port}, shown by
// namecast apps and GET /v1/apps); -register-mode interface registers Dubbo
// 2 style URLs instead (/dubbo/{interface}/providers, shown by namecast
// services), and all does both. Provider and consumer must agree.
// -register=false serves without registering, for an instance registered
// by other means (PUT /v1/apps/{app}/instances).
//
// The same program runs on Nacos, the registry Dubbo 3's documentation
// leads with: each agent's Nacos door answers nacos://127.0.0.1:8848 (gRPC
// on 9848) from the same gossiped registry.
//
//	namecast agent --nacos 127.0.0.1:8848 &
//	go run . -role provider -registry nacos://127.0.0.1:8848
//	go run . -role consumer -registry nacos://127.0.0.1:8848
//
// The two doors are one registry: a provider registered through Nacos is
// called by a consumer on ZooKeeper, and the other way round, in either
// register mode.
//
// The registry configuration is dubbo-go's own; the only line that names
// namecast is none: the address is ZooKeeper's (or Nacos') default.
// -registry (or NAMECAST_ZOOKEEPER) points elsewhere, as the tests do.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"dubbo.apache.org/dubbo-go/v3/config"
	_ "dubbo.apache.org/dubbo-go/v3/imports" // dubbo-go's registries, protocols and filters
)

// Interface is the Dubbo interface the provider exports and the consumer
// references; the registry files it under /dubbo/{Interface}/providers.
const Interface = "org.namecast.demo.Greeter"

// GreeterProvider is the provider's implementation, called over the dubbo
// protocol (hessian2).
type GreeterProvider struct{ addr string }

// SayHello answers with the provider's address, so a caller can tell which
// provider it reached.
func (g *GreeterProvider) SayHello(_ context.Context, name string) (string, error) {
	return fmt.Sprintf("hello %s, from %s", name, g.addr), nil
}

// Reference is the service's id in dubbo-go's configuration.
func (g *GreeterProvider) Reference() string { return "Greeter" }

// GreeterConsumer is the consumer's proxy; dubbo-go fills in SayHello.
type GreeterConsumer struct {
	SayHello func(ctx context.Context, name string) (string, error)
}

// Reference is the service's id in dubbo-go's configuration.
func (g *GreeterConsumer) Reference() string { return "Greeter" }

func main() {
	role := flag.String("role", "consumer", "provider or consumer")
	registry := flag.String("registry", envOr("NAMECAST_ZOOKEEPER", "127.0.0.1:2181"),
		"the local namecast agent's registry: its ZooKeeper address (zookeeper:// optional), or nacos://HOST:PORT for its Nacos door")
	port := flag.Int("port", 20000, "provider: the dubbo protocol's port")
	name := flag.String("name", "world", "consumer: whom to greet")
	every := flag.Duration("every", 0, "consumer: keep calling at this interval, printing each change of outcome")
	mode := flag.String("register-mode", "instance", "instance (application-level, dubbo-go's default), interface, or all")
	register := flag.Bool("register", true, "provider: register the service (false: only serve it)")
	flag.Parse()
	registryType, ok := registryTypes[*mode]
	if !ok {
		log.Fatalf("-register-mode %q: want instance, interface or all", *mode)
	}
	var err error
	switch *role {
	case "provider":
		err = provide(*registry, registryType, *port, *register)
	case "consumer":
		err = consume(*registry, registryType, *name, *every)
	default:
		err = fmt.Errorf("-role %q: want provider or consumer", *role)
	}
	if err != nil {
		log.Fatal(err)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// registryTypes maps Java Dubbo's register-mode names to dubbo-go's
// registry-type: "" is dubbo-go's default, application-level ("service").
var registryTypes = map[string]string{"instance": "", "interface": "interface", "all": "all"}

// rootConfig is what a dubbo-go application writes in dubbogo.yml: an
// application, and a registry of protocol zookeeper (or nacos, from a
// nacos:// address) at the given address (registry-type when not the
// default). Everything else is dubbo-go's default: the registry is the
// metadata report too, where the interface → application mapping goes.
func rootConfig(app, registry, registryType string) *config.RootConfigBuilder {
	protocol, addr := registryProtocol(registry)
	return config.NewRootConfigBuilder().
		SetApplication(config.NewApplicationConfigBuilder().SetName(app).Build()).
		AddRegistry(protocol, config.NewRegistryConfigBuilder().SetProtocol(protocol).SetAddress(addr).SetRegistryType(registryType).Build()).
		SetLogger(config.NewLoggerConfigBuilder().SetLevel("warn").Build())
}

// registryProtocol splits a -registry value into dubbo-go's registry
// protocol and address: zookeeper unless it says nacos://.
func registryProtocol(registry string) (protocol, addr string) {
	if p, a, ok := strings.Cut(registry, "://"); ok {
		return p, a
	}
	return "zookeeper", registry
}

// App is the provider's application name: its instances are
// /services/{App}/{ip:port}.
const App = "namecast-greeter-provider"

// provide exports GreeterProvider over the dubbo protocol on port and,
// unless register is false, registers it; dubbo-go unregisters it on
// SIGTERM or SIGINT.
func provide(registry, registryType string, port int, register bool) error {
	p := &GreeterProvider{addr: "127.0.0.1:" + strconv.Itoa(port)}
	config.SetProviderService(p)
	rc := rootConfig(App, registry, registryType).
		AddProtocol("dubbo", config.NewProtocolConfigBuilder().SetName("dubbo").SetPort(strconv.Itoa(port)).Build()).
		SetProvider(config.NewProviderConfigBuilder().
			AddService("Greeter", config.NewServiceConfigBuilder().SetInterface(Interface).SetProtocolIDs("dubbo").SetNotRegister(!register).Build()).
			Build()).
		Build()
	if err := config.Load(config.WithRootConfig(rc)); err != nil {
		return fmt.Errorf("starting the provider with registry %s: %w", registry, err)
	}
	if !register {
		fmt.Printf("PROVIDER serving %s on %s, not registered\n", Interface, p.addr)
	} else {
		fmt.Printf("PROVIDER serving %s on %s, registered through %s\n", Interface, p.addr, registry)
	}
	select {} // dubbo-go's signal handler unregisters and exits
}

// consume references the Greeter through the registry and calls it once,
// or, with every > 0, forever, printing a line each time the outcome
// changes ("CALL ok …" / "CALL error …").
func consume(registry, registryType, name string, every time.Duration) error {
	g := &GreeterConsumer{}
	config.SetConsumerService(g)
	rc := rootConfig("namecast-greeter-consumer", registry, registryType).
		SetConsumer(config.NewConsumerConfigBuilder().
			SetCheck(false). // start before the first provider; it is notified later
			AddReference("Greeter", config.NewReferenceConfigBuilder().SetInterface(Interface).SetProtocol("dubbo").SetRetries("0").Build()).
			Build()).
		Build()
	if err := config.Load(config.WithRootConfig(rc)); err != nil {
		return fmt.Errorf("starting the consumer with registry %s: %w", registry, err)
	}
	last := ""
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		reply, err := g.SayHello(ctx, name)
		cancel()
		out := "CALL ok " + reply
		if err != nil {
			out = "CALL error " + err.Error()
		}
		if out != last || every == 0 {
			fmt.Println(out)
			last = out
		}
		if every == 0 {
			return err
		}
		time.Sleep(every)
	}
}
