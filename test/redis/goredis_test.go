package redis_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
)

const (
	iface    = "org.apache.dubbo.demo.DemoService"
	provKey  = "/dubbo/" + iface + "/providers"
	consKey  = "/dubbo/" + iface + "/consumers"
	provider = "dubbo://10.0.0.7:20880/" + iface + "?anyhost=true&application=demo-provider&interface=" + iface + "&methods=sayHello&side=provider"
	consumer = "consumer://10.0.0.8/" + iface + "?application=demo-consumer&category=consumers&interface=" + iface + "&side=consumer"
)

// withRedis turns the Redis door on, off by default, in a test cluster.
func withRedis(c *agent.Config) { c.RedisAddr = "127.0.0.1:0" }

func expiry(d time.Duration) string { return strconv.FormatInt(time.Now().Add(d).UnixMilli(), 10) }

func goRedis(t *testing.T, addr string, opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: addr, MaxRetries: -1}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// go-redis v9 (it offers RESP3 with HELLO 3, falls back to RESP2 on the
// door's refusal, sends CLIENT SETINFO and ignores its error) registers,
// renews, reads and unregisters as Dubbo's RedisRegistry does, and a
// pattern subscriber on another agent hears every change.
func TestGoRedisAsDubbosRegistry(t *testing.T) {
	c := agenttest.Start(t, 2, withRedis)
	c.WaitMembers(2)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	a := goRedis(t, c.Agent(0).Addr("redis"), func(o *redis.Options) { o.DB = 3; o.ClientName = "demo-provider" })
	b := goRedis(t, c.Agent(1).Addr("redis"))
	if err := a.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING through go-redis (HELLO 3, then RESP2): %v", err)
	}
	if name, err := a.ClientGetName(ctx).Result(); err != nil || name != "demo-provider" {
		t.Fatalf("CLIENT GETNAME: %q, %v", name, err)
	}

	ps := b.PSubscribe(ctx, "/dubbo/"+iface+"/*")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the psubscribe confirmation
		t.Fatal(err)
	}
	msgs := ps.Channel()

	// Register: HSET, then PUBLISH (which reaches agent 0's subscribers;
	// agent 1's hear it from the door).
	if n, err := a.HSet(ctx, provKey, provider, expiry(time.Minute)).Result(); err != nil || n != 1 {
		t.Fatalf("HSET: %d, %v", n, err)
	}
	a.Publish(ctx, provKey, "register")
	expect(t, msgs, provKey, "register")

	// The consumer's read: SCAN with MATCH until the cursor is 0, HGETALL.
	var keys []string
	iter := b.Scan(ctx, 0, "/dubbo/"+iface+"/*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil || !slices.Equal(keys, []string{provKey}) {
		t.Fatalf("SCAN: %v, %v", keys, err)
	}
	all, err := b.HGetAll(ctx, provKey).Result()
	if err != nil || len(all) != 1 || all[provider] == "" {
		t.Fatalf("HGETALL on agent 1: %v, %v", all, err)
	}
	if exp, _ := strconv.ParseInt(all[provider], 10, 64); exp < time.Now().UnixMilli() {
		t.Fatalf("HGETALL on agent 1: expiry %s is past, Dubbo would drop the provider", all[provider])
	}

	// The consumer registers too.
	if n, err := b.HSet(ctx, consKey, consumer, expiry(time.Minute)).Result(); err != nil || n != 1 {
		t.Fatalf("consumer HSET: %d, %v", n, err)
	}
	b.Publish(ctx, consKey, "register")
	expect(t, msgs, consKey, "register")

	// Renewal: 0, so Dubbo publishes nothing.
	if n, err := a.HSet(ctx, provKey, provider, expiry(time.Minute)).Result(); err != nil || n != 0 {
		t.Fatalf("renewal HSET: %d, %v, want 0", n, err)
	}
	if typ, _ := b.Type(ctx, provKey).Result(); typ != "hash" {
		t.Fatalf("TYPE: %q", typ)
	}

	// Unregister.
	if n, err := a.HDel(ctx, provKey, provider).Result(); err != nil || n != 1 {
		t.Fatalf("HDEL: %d, %v", n, err)
	}
	a.Publish(ctx, provKey, "unregister")
	expect(t, msgs, provKey, "unregister")
	if n, err := b.Exists(ctx, provKey, consKey).Result(); err != nil || n != 1 {
		t.Fatalf("EXISTS after the unregister: %d, %v", n, err)
	}
}

// A provider that stops renewing is withdrawn at its expiry, with no
// admin process: subscribers on every agent hear "unregister".
func TestGoRedisExpiryWithoutAnAdmin(t *testing.T) {
	c := agenttest.Start(t, 2, withRedis)
	c.WaitMembers(2)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	a := goRedis(t, c.Agent(0).Addr("redis"))
	b := goRedis(t, c.Agent(1).Addr("redis"))
	ps := b.PSubscribe(ctx, "/dubbo/*")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := ps.Channel()
	a.HSet(ctx, provKey, provider, expiry(time.Second))
	expect(t, msgs, provKey, "register")
	expect(t, msgs, provKey, "unregister")
	if n, err := b.HLen(ctx, provKey).Result(); err != nil || n != 0 {
		t.Fatalf("HLEN after the expiry: %d, %v", n, err)
	}
}

func expect(t *testing.T, msgs <-chan *redis.Message, channel, payload string) {
	t.Helper()
	select {
	case m := <-msgs:
		if m.Channel != channel || m.Payload != payload {
			t.Fatalf("got %s %q, want %s %q", m.Channel, m.Payload, channel, payload)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no %q on %s within 20 s", payload, channel)
	}
}
