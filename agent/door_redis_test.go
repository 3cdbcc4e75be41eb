package agent_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/redis/resp"
	"github.com/namecast/namecast/internal/testutil"
)

// redisConn is a bare RESP client of an agent's Redis door.
type redisConn struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func dialRedis(t *testing.T, addr string) *redisConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &redisConn{t, nc, bufio.NewReader(nc)}
}

func (c *redisConn) do(args ...string) string {
	c.t.Helper()
	b := resp.Array(nil, len(args))
	for _, a := range args {
		b = resp.Bulk(b, a)
	}
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
	return c.read()
}

func (c *redisConn) read() string {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	v, err := resp.ReadValue(c.r)
	if err != nil {
		c.t.Fatalf("no reply: %v", err)
	}
	return string(v)
}

// The Redis door is off unless --redis names it: most hosts run a Redis
// on 6379 already.
func TestRedisDoorIsOffByDefault(t *testing.T) {
	if got := agent.DefaultConfig().RedisAddr; got != "off" {
		t.Fatalf("default --redis %q, want off", got)
	}
}

// A URL registered with HSET on one agent is a field on another, whose
// pattern subscribers hear "register" and "unregister" as Dubbo's
// registry would; one registered over HTTP is a field too.
func TestRedisDoorAcrossAgents(t *testing.T) {
	c := agenttest.Start(t, 2, withRedis)
	c.WaitMembers(2)
	const (
		key = "/dubbo/com.example.Redis/providers"
		url = "dubbo://10.0.0.9:20880/com.example.Redis?interface=com.example.Redis&side=provider"
	)
	sub := dialRedis(t, c.Agent(1).Addr("redis"))
	sub.do("PSUBSCRIBE", "/dubbo/com.example.Redis/*")
	pub := dialRedis(t, c.Agent(0).Addr("redis"))
	expiry := time.Now().Add(time.Minute).UnixMilli()
	if got := pub.do("HSET", key, url, itoa(expiry)); got != ":1\r\n" {
		t.Fatalf("HSET on agent 0: %q", got)
	}
	pub.do("PUBLISH", key, "register") // as Dubbo does: it reaches agent 0's subscribers only
	if got := sub.read(); !strings.HasSuffix(got, key+"\r\n$8\r\nregister\r\n") {
		t.Fatalf("agent 1's subscriber got %q", got)
	}
	other := dialRedis(t, c.Agent(1).Addr("redis"))
	if got := other.do("HKEYS", key); got != "*1\r\n$"+itoa(int64(len(url)))+"\r\n"+url+"\r\n" {
		t.Fatalf("HKEYS on agent 1: %q", got)
	}
	pub.do("HDEL", key, url)
	if got := sub.read(); !strings.HasSuffix(got, key+"\r\n$10\r\nunregister\r\n") {
		t.Fatalf("agent 1's subscriber got %q", got)
	}

	// Registered over HTTP on agent 0: a field on agent 1.
	req, _ := http.NewRequest("PUT", "http://"+c.Agent(0).Addr("http")+"/v1/urls", strings.NewReader(`{"url":"`+url+`"}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT /v1/urls: %d", res.StatusCode)
	}
	if got := sub.read(); !strings.HasSuffix(got, key+"\r\n$8\r\nregister\r\n") {
		t.Fatalf("agent 1's subscriber got %q", got)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if got := other.do("HLEN", key); got != ":1\r\n" {
			return errorf("HLEN on agent 1: %q", got)
		}
		return nil
	})
}

// withRedis turns the Redis door on, off by default, in a test cluster.
func withRedis(c *agent.Config) { c.RedisAddr = "127.0.0.1:0" }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// With --data-dir a field held through the Redis door survives the
// agent's crash with the expiry its client wrote (saved before HSET's
// reply), and is withdrawn at that expiry unless renewed.
func TestRedisFieldSurvivesRestart(t *testing.T) {
	c := agenttest.Start(t, 1, withRedis, agenttest.WithDataDirs(t.TempDir()))
	const (
		key = "/dubbo/com.example.Restart/providers"
		url = "dubbo://10.0.0.9:20880/com.example.Restart?interface=com.example.Restart&side=provider"
	)
	exp := itoa(time.Now().Add(4 * time.Second).UnixMilli())
	if got := dialRedis(t, c.Agent(0).Addr("redis")).do("HSET", key, url, exp); got != ":1\r\n" {
		t.Fatalf("HSET: %q", got)
	}
	a := c.Restart(0)
	r := dialRedis(t, a.Addr("redis"))
	if got := r.do("HGET", key, url); got != "$13\r\n"+exp+"\r\n" {
		t.Fatalf("HGET after the restart: %q, want the expiry written, %s", got, exp)
	}
	// Renewed through the restarted door: HSET counts 0, it was there.
	if got := r.do("HSET", key, url, exp); got != ":0\r\n" {
		t.Fatalf("renewal after the restart: %q", got)
	}
	testutil.Eventually(t, 20*time.Second, func() error {
		if got := r.do("HLEN", key); got != ":0\r\n" {
			return errorf("HLEN past the expiry: %q", got)
		}
		return nil
	})
}
