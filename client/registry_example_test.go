package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/namecast/namecast/client"
)

func ExampleRegistry() {
	c, err := client.NewClient(client.Config{}) // $NAMECAST_HTTP_ADDR or 127.0.0.1:7947
	if err != nil {
		log.Fatal(err)
	}
	reg, err := client.NewRegistry(c, client.RegistryOptions{
		CacheFile: "/var/cache/myapp/registry.json", // answers while the agent is down
		TTL:       30 * time.Second,                 // withdrawn if this process dies
	})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close() // unregisters the provider below

	ctx := context.Background()
	// A provider: registered until Close, again after an agent restart.
	if err := reg.Register(ctx, "dubbo://10.0.0.5:20880/com.example.Greeter?version=1.0.0"); err != nil {
		log.Print(err) // still retried in the background
	}
	// A consumer: Subscribe returns after the first notification, one call
	// per category; later calls bring each changed category in full.
	listener := client.NotifyFunc(func(urls []string) { fmt.Println(urls) })
	sub := "consumer://10.0.0.9/com.example.Greeter?category=providers,routers&version=1.0.0"
	if err := reg.Subscribe(ctx, sub, listener); err != nil {
		log.Print(err)
	}
	defer reg.Unsubscribe(sub, listener)
}
