package redis

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

func urlRec(iface, category, url string) routes.Record {
	return routes.Record{URL: &routes.URL{Interface: iface, Category: category, URL: url}}
}

// fromPeer applies a change another agent made to the door's table, as
// gossip would.
func fromPeer(t *testing.T, table, peer *routes.Table, puts []routes.Record, dels []string) {
	t.Helper()
	d, ok := peer.ApplyLocal(puts, dels)
	if !ok {
		t.Fatal("the peer changed nothing")
	}
	table.Apply(d)
}

func pmessage(pattern, channel, msg string) string {
	return string(frame("pmessage", pattern, channel, msg))
}

// A field whose expiry passes unrenewed is withdrawn by the door (Dubbo
// leaves that to an admin process), and subscribers hear "unregister".
func TestFieldExpiresWithoutAnAdmin(t *testing.T) {
	srv, f := startDoor(t, Config{Sweep: 10 * time.Millisecond})
	sub := dialClient(t, tcp(srv.Addr()))
	sub.do("PSUBSCRIBE", "/dubbo/com.foo.Bar/*")
	c := dialClient(t, tcp(srv.Addr()))
	soon := strconv.FormatInt(time.Now().Add(300*time.Millisecond).UnixMilli(), 10)
	if got := c.do("HSET", barKey, provider1, soon); got != ":1\r\n" {
		t.Fatalf("HSET: %q", got)
	}
	if got := c.do("HGET", barKey, provider1); got != string(frame(soon)[4:]) {
		t.Fatalf("HGET: %q, want the expiry written, %s", got, soon)
	}
	if got := sub.read(); got != pmessage("/dubbo/com.foo.Bar/*", barKey, "unregister") {
		t.Fatalf("subscriber got %q", got)
	}
	if got := c.do("HGETALL", barKey); got != "*0\r\n" {
		t.Fatalf("HGETALL after the expiry: %q", got)
	}
	if _, ok := f.Routes.LocalRecord(urlRec("com.foo.Bar", "providers", provider1).Key()); ok {
		t.Fatal("the record is still in the table")
	}
	// A renewal in time keeps it: Dubbo renews every session/2.
	later := strconv.FormatInt(time.Now().Add(400*time.Millisecond).UnixMilli(), 10)
	c.do("HSET", barKey, provider1, later)
	for range 3 {
		later = strconv.FormatInt(time.Now().Add(400*time.Millisecond).UnixMilli(), 10)
		if got := c.do("HSET", barKey, provider1, later); got != ":0\r\n" {
			t.Fatalf("renewal: %q, want :0", got)
		}
		time.Sleep(200 * time.Millisecond) // half the expiry, as Dubbo renews
	}
	if got := c.do("HLEN", barKey); got != ":1\r\n" {
		t.Fatalf("renewed field: HLEN %q", got)
	}
}

// A provider registered on another agent (or through another door) is a
// field with an expiry the door computes, and its coming and going are
// published to this agent's subscribers as Dubbo's registry would.
func TestAnotherAgentsProviderIsAField(t *testing.T) {
	srv, f := startDoor(t, Config{})
	peer := routes.NewTable("peer", 1)
	sub := dialClient(t, tcp(srv.Addr()))
	sub.do("PSUBSCRIBE", "/dubbo/com.foo.Bar/*")
	chsub := dialClient(t, tcp(srv.Addr()))
	chsub.do("SUBSCRIBE", barKey)
	rec := urlRec("com.foo.Bar", "providers", provider1)
	fromPeer(t, f.Routes, peer, []routes.Record{rec}, nil)
	if got := sub.read(); got != pmessage("/dubbo/com.foo.Bar/*", barKey, "register") {
		t.Fatalf("pattern subscriber got %q", got)
	}
	if got := chsub.read(); got != string(frame("message", barKey, "register")) {
		t.Fatalf("channel subscriber got %q", got)
	}
	c := dialClient(t, tcp(srv.Addr()))
	before := time.Now().Add(DefaultExpiry).UnixMilli()
	v := c.do("HGET", barKey, provider1)
	after := time.Now().Add(DefaultExpiry).UnixMilli()
	ms, err := strconv.ParseInt(strings.Split(v, "\r\n")[1], 10, 64)
	if err != nil || ms < before || ms > after {
		t.Fatalf("HGET: %q, want now + 60 s in ms (%d..%d)", v, before, after)
	}
	if got := c.do("KEYS", "*"); got != string(frame(barKey)) {
		t.Fatalf("KEYS: %q", got)
	}
	// HDEL of what another agent holds removes nothing.
	if got := c.do("HDEL", barKey, provider1); got != ":0\r\n" {
		t.Fatalf("HDEL of another agent's field: %q", got)
	}
	fromPeer(t, f.Routes, peer, nil, []string{rec.Key()})
	if got := sub.read(); got != pmessage("/dubbo/com.foo.Bar/*", barKey, "unregister") {
		t.Fatalf("pattern subscriber got %q", got)
	}
}

// A change a client of the door made is published by the client (Dubbo
// publishes after each write), not a second time by the door.
func TestOwnWritesAreNotPublishedTwice(t *testing.T) {
	srv, f := startDoor(t, Config{})
	sub := dialClient(t, tcp(srv.Addr()))
	sub.do("PSUBSCRIBE", "/dubbo/*")
	c := dialClient(t, tcp(srv.Addr()))
	c.do("HSET", barKey, provider1, later)
	c.do("HDEL", barKey, provider1)
	c.do("HSET", barKey, provider2, later)
	c.do("DEL", barKey)
	// A change from elsewhere after them: once the subscriber hears it,
	// the door has published whatever it would have of the writes above.
	fromPeer(t, f.Routes, routes.NewTable("peer", 1), []routes.Record{urlRec("com.foo.Bar", "consumers", consumer1)}, nil)
	if got := sub.read(); got != pmessage("/dubbo/*", barCons, "register") {
		t.Fatalf("subscriber got %q first, want only the peer's change", got)
	}
	if n := srv.counts.notifications.Load(); n != 1 {
		t.Fatalf("the door published %d changes, want 1 (the peer's)", n)
	}
}

// Writes past the agent's record budget are refused with Redis' OOM,
// naming the limit; nothing changes.
func TestWritesPastTheBudgetAreOOM(t *testing.T) {
	srv, f := startDoor(t, Config{})
	f.Budget = routes.Budget{Records: 1}
	c := dialClient(t, tcp(srv.Addr()))
	got := c.do("HSET", barKey, provider1, later, provider2, later)
	if !strings.HasPrefix(got, "-OOM ") || !strings.Contains(got, "--max-records=1") {
		t.Fatalf("HSET past the budget: %q, want -OOM naming --max-records", got)
	}
	if got := c.do("HLEN", barKey); got != ":0\r\n" {
		t.Fatalf("HLEN after the refusal: %q", got)
	}
	if got := c.do("HSET", barKey, provider1, later); got != ":1\r\n" {
		t.Fatalf("HSET within the budget: %q", got)
	}
}

// The door holds Dubbo's registry: a key outside its layout, a field that
// is not a URL of the key's interface and category, or a value that is
// not an expiry is refused, and changes nothing.
func TestOnlyDubbosLayoutIsWritten(t *testing.T) {
	srv, _ := startDoor(t, Config{})
	c := dialClient(t, tcp(srv.Addr()))
	for _, args := range [][]string{
		{"HSET", "user:1", "name", "x"},
		{"HSET", "/other/com.foo.Bar/providers", provider1, later},
		{"HSET", "/dubbo/com.foo.Baz/providers", provider1, later},
		{"HSET", barCons, provider1, later},
		{"HSET", barKey, "not a url", later},
		{"HSET", barKey, provider1, "soon"},
		{"HSET", barKey, provider2, later, provider1, "soon"},
	} {
		if got := c.do(args...); !strings.HasPrefix(got, "-ERR namecast holds Dubbo's registry only") {
			t.Errorf("%q: %q", args, got)
		}
	}
	// A URL that does not parse is refused naming why, as the HTTP door
	// names it.
	if got := c.do("HSET", barKey, "dubbo://10.0.0.1:99999/com.foo.Bar", later); !strings.Contains(got, "99999") || !strings.Contains(got, "port") {
		t.Errorf("a port out of range: %q, want the cause", got)
	}
	if got := c.do("KEYS", "*"); got != "*0\r\n" {
		t.Fatalf("KEYS after refusals: %q", got)
	}
}

// A dynamic=false URL is a rule: cluster-scoped, with no expiry, as every
// door writes it.
func TestStaticURLIsARule(t *testing.T) {
	srv, f := startDoor(t, Config{Sweep: 10 * time.Millisecond})
	c := dialClient(t, tcp(srv.Addr()))
	static := provider1 + "&dynamic=false"
	past := strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10)
	if got := c.do("HSET", barKey, static, past); got != ":1\r\n" {
		t.Fatalf("HSET: %q", got)
	}
	key := urlRec("com.foo.Bar", "providers", dubbo.MustParse(static).String()).Key()
	if _, ok := f.Routes.Rule(key); !ok {
		t.Fatal("a dynamic=false URL is not a rule")
	}
	if got := c.do("HDEL", barKey, static); got != ":1\r\n" {
		t.Fatalf("HDEL: %q", got)
	}
	if _, ok := f.Routes.Rule(key); ok {
		t.Fatal("the rule stayed")
	}
}

// Every input is bounded: a bulk, a command array, the connections, the
// subscriptions of one connection; past each, Redis' error (then the
// connection closes, for a request it cannot read).
func TestInputsAreBounded(t *testing.T) {
	srv, _ := startDoor(t, Config{MaxClients: 3, MaxSubscriptions: 2})
	// refused sends raw and expects err, then the connection closed; the
	// client closes its end too, as clients do on an error, and the door
	// forgets the connection.
	refused := func(what string, raw []byte, err string) {
		t.Helper()
		c := dialClient(t, tcp(srv.Addr()))
		go c.nc.Write(raw) // the door may stop reading before the end
		if got := c.read(); got != err || !c.closed() {
			t.Fatalf("%s: %q", what, got)
		}
		c.nc.Close()
		testutil.Eventually(t, 5*time.Second, func() error {
			if n := srv.counts.conns.Load(); n != 0 {
				return fmt.Errorf("%d connections open", n)
			}
			return nil
		})
	}
	refused("bulk past 64 KiB", []byte(fmt.Sprintf("*2\r\n$4\r\nECHO\r\n$%d\r\n", 64<<10+1)), "-ERR Protocol error: invalid bulk length\r\n")
	refused("array past 1024", []byte("*1025\r\n"), "-ERR Protocol error: invalid multibulk length\r\n")
	refused("inline past 64 KiB", []byte(strings.Repeat("x", 70<<10)), "-ERR Protocol error: too big inline request\r\n")
	big := strings.Repeat("y", 60<<10)
	args := []string{"HDEL", barKey}
	for range 18 {
		args = append(args, big)
	}
	refused("command past 1 MiB", frame(args...), "-ERR Protocol error: invalid bulk length\r\n")

	sub := dialClient(t, tcp(srv.Addr()))
	sub.do("SUBSCRIBE", "a", "b")
	sub.read() // b's
	if got := sub.do("PSUBSCRIBE", "c"); !strings.HasPrefix(got, "-ERR namecast: this connection subscribes to 2 channels") {
		t.Fatalf("past the subscriptions: %q", got)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if n := srv.counts.conns.Load(); n != 1 {
			return fmt.Errorf("%d connections open", n)
		}
		return nil
	})
	dialClient(t, tcp(srv.Addr())).do("PING")
	dialClient(t, tcp(srv.Addr())).do("PING")
	over := dialClient(t, tcp(srv.Addr()))
	if got := over.read(); got != "-ERR max number of clients reached\r\n" || !over.closed() {
		t.Fatalf("past max clients: %q", got)
	}
}

// With a password, every command but AUTH and QUIT waits for it, as
// Redis' requirepass makes it; compared with redis-server's.
func TestPasswordAsRequirepass(t *testing.T) {
	dialRedis := startRedis(t, "--requirepass", "s3cret")
	srv, _ := startDoor(t, Config{Password: "s3cret"})
	script := []step{
		cmd("PING"), cmd("HGETALL", barKey), cmd("FOO"), cmd("HGET"), cmd("AUTH", "nope"), cmd("AUTH", "bob", "s3cret"),
		cmd("AUTH", "s3cret"), cmd("PING"), cmd("AUTH", "default", "s3cret"), cmd("AUTH", "default", "x"), cmd("PING"),
	}
	want := runScript(t, dialRedis, script, false)
	got := runScript(t, tcp(srv.Addr()), script, true)
	for i, s := range script {
		if got[i] != want[i] {
			t.Errorf("step %d %v: door answered %q, redis-server 7.0 %q", i, s.cmd, got[i], want[i])
		}
	}
}

// A connection's first read of the registry waits for the agent's first
// sync, so an empty answer means none rather than not learned yet.
func TestReadsWaitForTheFirstSync(t *testing.T) {
	srv, f := startDoor(t, Config{})
	f.NotYet.Store(true)
	c := dialClient(t, tcp(srv.Addr()))
	if got := c.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING: %q", got)
	}
	c.send(frame("KEYS", "*"))
	if v, err := c.readWithin(200 * time.Millisecond); err == nil {
		t.Fatalf("KEYS answered %q before the agent synced", v)
	}
	f.NotYet.Store(false)
	if got := c.read(); got != "*0\r\n" {
		t.Fatalf("KEYS: %q", got)
	}
}
