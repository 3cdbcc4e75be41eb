// Package client is the Go API client for a namecast agent's HTTP API, in
// the shape of hashicorp's consul/api: one [Client] per agent, one typed
// method per endpoint, blocking queries through [QueryOptions] and
// [QueryMeta], and Watch methods that follow a view as it changes.
//
// A client talks to the agent beside its process, by default at
// 127.0.0.1:7947 (or $NAMECAST_HTTP_ADDR):
//
//	c, err := client.NewClient(client.Config{})
//	route, meta, err := c.TopicRoute(ctx, "TopicTest", nil)
//	// Block until anything changes, for at most 30 s:
//	route, meta, err = c.TopicRoute(ctx, "TopicTest", &client.QueryOptions{
//		WaitIndex: meta.LastIndex, WaitTime: 30 * time.Second,
//	})
//
// # Errors
//
// An answer the agent refused is a [*StatusError] carrying its HTTP status
// and the agent's message; [IsNotFound] tells an unknown topic or service
// apart. A request that never reached the agent fails with the
// *url.Error of net/http. Decoding failures are wrapped with the request
// they belong to.
//
// # Dubbo registry
//
// [Registry] is Dubbo's RegistryService on top of a Client: Register and
// Unregister service URLs, Subscribe a [NotifyListener] that receives the
// complete list of each category on every change (empty:// when a
// category is empty), Lookup once. It retries failed calls in the
// background, registers again after the agent restarts, and can keep the
// last-known lists in a cache file for when the agent is down:
//
//	reg, err := client.NewRegistry(c, client.RegistryOptions{TTL: 30 * time.Second})
//	err = reg.Register(ctx, "dubbo://10.0.0.5:20880/com.foo.Bar?version=1.0.0")
//	err = reg.Subscribe(ctx, "consumer://10.0.0.9/com.foo.Bar?category=providers,routers&version=1.0.0",
//		client.NotifyFunc(func(urls []string) { fmt.Println(urls) }))
//	defer reg.Close()
//
// # Concurrency
//
// A Client is safe for concurrent use and holds no goroutines: every call
// runs on its caller's goroutine and stops when its context is done. Watch
// methods block until their context is done, so the caller owns (and
// waits for) the goroutine that runs them. A Registry is also safe for
// concurrent use but runs goroutines of its own, which Close stops and
// waits for.
package client
