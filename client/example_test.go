package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/namecast/namecast/client"
)

func ExampleClient_TopicRoute() {
	c, err := client.NewClient(client.Config{}) // $NAMECAST_HTTP_ADDR or 127.0.0.1:7947
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	route, meta, err := c.TopicRoute(ctx, "TopicTest", nil)
	for err == nil || client.IsNotFound(err) {
		fmt.Println(len(route.BrokerDatas), "brokers serve TopicTest")
		// Block until the agent's index passes the last answer's.
		route, meta, err = c.TopicRoute(ctx, "TopicTest", &client.QueryOptions{
			WaitIndex: meta.LastIndex, WaitTime: 5 * time.Minute,
		})
	}
	log.Fatal(err)
}

func ExampleClient_WatchURLs() {
	c, err := client.NewClient(client.Config{Address: "127.0.0.1:7947"})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// fn gets the full provider list first and on every change; the watch
	// retries with backoff while the agent cannot answer.
	err = c.WatchURLs(ctx, "com.foo.BarService", client.CategoryProviders, func(urls []string, err error) {
		if err != nil {
			log.Print(err)
			return
		}
		fmt.Println(urls)
	})
	log.Print(err)
}
