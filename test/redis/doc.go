// Package redis_test runs real Redis clients against namecast's Redis door
// (agent/redis): go-redis v9, the client Go applications use, registering,
// scanning and subscribing as Dubbo's RedisRegistry does, across agents;
// and the figure of docs/performance.md, HSET on one agent to pmessage on
// another beside the ZooKeeper door's create to child watch. Its own
// module, so that go-redis and go-zookeeper stay out of the agent's
// dependencies.
package redis_test
