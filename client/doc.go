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
// # Concurrency
//
// A Client is safe for concurrent use and holds no goroutines: every call
// runs on its caller's goroutine and stops when its context is done. Watch
// methods block until their context is done, so the caller owns (and
// waits for) the goroutine that runs them.
package client
