package redis

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// The differential tests send the same commands to Debian's redis-server
// 7.0 and to the door, each on fresh connections to an empty registry,
// and compare the replies byte for byte. Where the door differs on
// purpose (docs/protocols/redis.md, "Where the door differs") the step
// says so and what the door answers instead.

// step is one thing a script does on one of its connections.
type step struct {
	conn   int      // which connection (0, 1, ...)
	cmd    []string // a command; its reply is compared
	raw    string   // or raw bytes; the reply and the close are compared
	frames int      // or this many pushed frames are read and compared
	sorted bool     // an array whose order Redis leaves to its hash table
	pairs  bool     // sorted, by field and value pairs (HGETALL)
	door   string   // the door's reply where it differs on purpose
}

func cmd(args ...string) step { return step{cmd: args} }

func globSteps(patterns ...string) []step {
	var out []step
	for _, p := range patterns {
		out = append(out, step{cmd: []string{"KEYS", p}, sorted: true})
	}
	return out
}

func on(conn int, s step) step { s.conn = conn; return s }

const (
	provider1 = "dubbo://10.0.0.1:20880/com.foo.Bar?anyhost=true&application=demo&interface=com.foo.Bar&methods=hi&side=provider&timestamp=1"
	provider2 = "dubbo://10.0.0.2:20880/com.foo.Bar?anyhost=true&application=demo&interface=com.foo.Bar&methods=hi&side=provider&timestamp=2"
	consumer1 = "consumer://10.0.0.3/com.foo.Bar?application=app&category=consumers&interface=com.foo.Bar&side=consumer&timestamp=3"
	barKey    = "/dubbo/com.foo.Bar/providers"
	barCons   = "/dubbo/com.foo.Bar/consumers"
	later     = "4102444800000" // 2100-01-01, in epoch ms
	later2    = "4102444860000"
)

var scripts = map[string][]step{
	"connection": {
		cmd("PING"), cmd("ping", "a"), cmd("PING", "a", "b"), cmd("ECHO", "x y"), cmd("ECHO"), cmd("echo", "a", "b"),
		cmd("SELECT", "0"), cmd("SELECT", "15"), cmd("SELECT", "16"), cmd("SELECT", "-1"), cmd("SELECT", "x"), cmd("SELECT"),
		cmd("CLIENT", "GETNAME"), cmd("CLIENT", "SETNAME", "dubbo"), cmd("CLIENT", "GETNAME"), cmd("CLIENT", "SETNAME", "a b"),
		cmd("CLIENT", "SETNAME"), cmd("CLIENT", "GETNAME", "x"), cmd("CLIENT", "SETINFO", "lib-name", "jedis"), cmd("client", "foo"), cmd("CLIENT"),
		cmd("AUTH", "x"), cmd("AUTH", "a", "b"), cmd("AUTH", "a", "b", "c"), cmd("AUTH"),
		cmd("FOO"), cmd("FOO", "a", "b"), cmd("FOO", strings.Repeat("k", 200), "x"), cmd("FOO", "a\r\nb", "c"), cmd(strings.Repeat("F", 200)),
		{cmd: []string{"GET", "a"}, door: "-ERR unknown command 'GET', with args beginning with: 'a' \r\n"},
		cmd("COMMAND", "COUNT", "x"), cmd("COMMAND", "FOO"),
		// The door's COMMAND table is redis-server's own for what it serves
		// (CLIENT's and COMMAND's list their subcommands in an order each
		// redis-server process draws anew, so they are left out).
		cmd("COMMAND", "INFO", "ping", "echo", "auth", "select", "quit", "info", "hset", "hdel", "hget",
			"hgetall", "hkeys", "hlen", "del", "exists", "type", "keys", "scan", "publish", "subscribe", "psubscribe",
			"unsubscribe", "punsubscribe", "HSET"),
		{cmd: []string{"HELLO", "3"}, door: "-ERR unknown command 'HELLO', with args beginning with: '3' \r\n"},
		{cmd: []string{"HELLO"}, door: "-ERR unknown command 'HELLO', with args beginning with: \r\n"},
		cmd("QUIT", "x"),
	},
	"hash": {
		cmd("HSET", barKey, provider1, later), cmd("HSET", barKey, provider1, later2), cmd("HSET", barKey, provider1, later, provider2, later),
		cmd("HGET", barKey, provider1), cmd("HGET", barKey, provider2+"&x=1"), cmd("HGET", "/dubbo/nope/providers", provider1),
		{cmd: []string{"HGETALL", barKey}, pairs: true}, {cmd: []string{"HKEYS", barKey}, sorted: true}, cmd("HLEN", barKey), cmd("HGETALL", "nope"), cmd("HKEYS", "nope"), cmd("HLEN", "nope"),
		cmd("EXISTS", barKey, "nope", barKey), cmd("TYPE", barKey), cmd("TYPE", "nope"),
		cmd("HSET", barCons, consumer1, later),
		{cmd: []string{"KEYS", "*"}, sorted: true}, {cmd: []string{"KEYS", "/dubbo/*"}, sorted: true}, cmd("KEYS", "/dubbo/com.foo.Bar/p*"),
		{cmd: []string{"KEYS", "*Bar*s"}, sorted: true}, cmd("KEYS", "/dubbo/com.foo.Ba?/consumers"), cmd("KEYS", "/dubbo/com.foo.Bar/[cx]*"), cmd("KEYS", "/dubbo/com.foo.Bar/[^c]*"),
		cmd("KEYS", "/dubbo/com.foo.Bar/[a-d]onsumers"), cmd("KEYS", "/dubbo/com.foo.Bar/[d-a]onsumers"), cmd("KEYS", "/dubbo/com\\.foo.Bar/consumers"),
		cmd("KEYS", "nomatch"), cmd("KEYS", "/dubbo/com.foo.Bar/[c"),
		{cmd: []string{"SCAN", "0", "MATCH", "/dubbo/*"}, sorted: true}, {cmd: []string{"SCAN", "0", "COUNT", "100"}, sorted: true},
		cmd("SCAN", "0", "MATCH", "/dubbo/com.foo.Bar/c*", "COUNT", "1000"), {cmd: []string{"scan", "0", "type", "hash"}, sorted: true}, cmd("SCAN", "0", "TYPE", "string"),
		cmd("HDEL", barKey, provider1, provider1, "nope"), cmd("HDEL", barKey, provider1), cmd("HLEN", barKey), cmd("HDEL", barKey, provider2),
		cmd("EXISTS", barKey), cmd("TYPE", barKey), cmd("HGETALL", barKey), cmd("DEL", barKey), cmd("DEL", barCons, barKey), cmd("KEYS", "*"),
	},
	"globs": append([]step{
		cmd("HSET", barKey, provider1, later), cmd("HSET", barCons, consumer1, later),
		cmd("HSET", "/dubbo/a-]b/routers", "route://0.0.0.0/a-]b?category=routers&interface=a-]b", later),
	}, globSteps(
		"*", "/dubbo/*", "*s", "*[", "[", "\\", "*\\", "/dubbo/a-\\]b/*", "/dubbo/a-[]]b/*", "/dubbo/a-[]b/*", "/dubbo/[a-]-*",
		"/dubbo/[-a]-*", "/dubbo/[^c]*", "/dubbo/[^]*", "/dubbo/a-[\\]]b/*", "*/[pr]*", "*/[r-p]*", "?dubbo*", "/dubbo/com.foo.Bar/?????????",
		"/dubbo/*/*/*", "**/providers", "*[a", "/dubbo/a-]b/routers[", "/dubbo/com.foo.Bar/providers\\",
	)...),
	"arity and syntax": {
		cmd("HSET", barKey), cmd("HSET", barKey, provider1), cmd("HSET", barKey, provider1, later, provider2),
		cmd("HGET", barKey), cmd("HDEL", barKey), cmd("HGETALL"), cmd("HKEYS", "a", "b"), cmd("HLEN"), cmd("DEL"), cmd("EXISTS"), cmd("TYPE"),
		cmd("KEYS"), cmd("KEYS", "a", "b"), cmd("SCAN"), cmd("SCAN", "x"), cmd("SCAN", "-1"), cmd("SCAN", "0", "COUNT", "0"), cmd("SCAN", "0", "COUNT", "x"),
		cmd("SCAN", "0", "MATCH"), cmd("SCAN", "0", "FOO", "1"), cmd("PUBLISH", "a"), cmd("SUBSCRIBE"), cmd("PSUBSCRIBE"),
	},
	"pubsub": {
		on(0, cmd("SUBSCRIBE", "a", "b")), on(0, cmd("PSUBSCRIBE", "/dubbo/*")), on(0, step{frames: 1}),
		on(0, cmd("HSET", barKey, provider1, later)), on(0, cmd("CLIENT", "GETNAME")), on(0, cmd("ECHO", "x")),
		on(0, cmd("PING")), on(0, cmd("PING", "x")), on(0, cmd("SUBSCRIBE", "a")),
		on(1, cmd("PUBLISH", "a", "hello")), on(0, step{frames: 1}),
		on(1, cmd("PUBLISH", barKey, "register")), on(0, step{frames: 1}),
		on(1, cmd("PUBLISH", "nobody", "x")),
		on(0, cmd("UNSUBSCRIBE", "b", "zz")), on(0, cmd("UNSUBSCRIBE")),
		on(0, cmd("PUNSUBSCRIBE")), on(0, cmd("PUNSUBSCRIBE")), on(0, cmd("UNSUBSCRIBE")),
		on(0, cmd("PING")), on(0, cmd("QUIT")),
	},
	// What Dubbo's RedisRegistry sends (docs/protocols/redis.md): a
	// provider registers and renews, a consumer subscribes and reads, the
	// provider unregisters.
	"dubbo": {
		on(0, cmd("PSUBSCRIBE", "/dubbo/com.foo.Bar/*")), // the consumer's notifier
		on(1, cmd("PING")), on(1, cmd("HSET", barKey, provider1, later)), on(1, cmd("PUBLISH", barKey, "register")), // register
		on(0, step{frames: 1}),
		on(2, cmd("SCAN", "0", "MATCH", "/dubbo/com.foo.Bar/*", "COUNT", "1000")), on(2, cmd("HGETALL", barKey)), // the consumer reads
		on(2, cmd("HSET", barCons, consumer1, later)), on(2, cmd("PUBLISH", barCons, "register")), on(0, step{frames: 1}),
		on(1, cmd("HSET", barKey, provider1, later2)), // the renewal: 0, so no publish
		on(1, cmd("HGET", barKey, provider1)),
		on(1, cmd("HDEL", barKey, provider1)), on(1, cmd("PUBLISH", barKey, "unregister")), on(0, step{frames: 1}), // unregister
		on(2, cmd("HGETALL", barKey)), on(2, cmd("KEYS", "/dubbo/com.foo.Bar/*")),
		// An admin (interface=*): its notifier, then a tick's clean-up
		// scan of every key, reading each, deleting nothing unexpired.
		on(3, cmd("PSUBSCRIBE", "/dubbo/*")),
		on(4, step{cmd: []string{"SCAN", "0", "MATCH", "/dubbo/*", "COUNT", "1000"}, sorted: true}), on(4, cmd("HGETALL", barCons)),
		on(2, cmd("HDEL", barCons, consumer1)), on(2, cmd("PUBLISH", barCons, "unregister")),
		on(0, step{frames: 1}), on(3, step{frames: 1}),
	},
	"protocol errors": {
		on(0, step{raw: "*2\r\n$4\r\nPING\r\n$-5\r\n"}),
		on(1, step{raw: "*2\r\n$4\r\nPING\r\nx3\r\n"}),
		on(2, step{raw: "*99999999999\r\n"}),
		on(3, step{raw: "*1\r\n$536870913\r\n"}),
		on(4, step{raw: "PING\r\nECHO \"a b\"\r\nECHO 'it''s'\r\nECHO \"\\x41\\n\"\r\nECHO \"a\r\n"}),
		on(5, step{raw: "*0\r\n*-1\r\nPING\r\n\r\n*1\r\n$4\r\nPING\r\nQUIT\r\n"}),
		on(6, step{raw: "*x\r\n"}),
	},
}

func TestDifferentialAgainstRedis7(t *testing.T) {
	dialRedis := startRedis(t)
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			flush := dialClient(t, dialRedis)
			if got := flush.do("FLUSHALL"); got != "+OK\r\n" {
				t.Fatalf("FLUSHALL: %q", got)
			}
			srv, _ := startDoor(t, Config{})
			want := runScript(t, dialRedis, script, false)
			got := runScript(t, tcp(srv.Addr()), script, true)
			for i, s := range script {
				if got[i] != want[i] {
					t.Errorf("step %d %v%q: door answered\n  %s\nredis-server 7.0 answered\n  %s", i, s.cmd, s.raw, quoted(got[i]), quoted(want[i]))
				}
			}
		})
	}
}

// runScript runs a script and returns what each step read; for a step
// the door answers differently on purpose, the door's expected answer
// stands in for redis-server's.
func runScript(t *testing.T, dial func() (net.Conn, error), script []step, door bool) []string {
	conns := map[int]*client{}
	get := func(i int) *client {
		if conns[i] == nil {
			conns[i] = dialClient(t, dial)
		}
		return conns[i]
	}
	out := make([]string, len(script))
	for i, s := range script {
		c := get(s.conn)
		switch {
		case s.cmd != nil:
			if s.door != "" && !door {
				break
			}
			out[i] = c.do(s.cmd...)
			if s.sorted || s.pairs {
				out[i] = sortArray(out[i], s.pairs)
			}
		case s.raw != "":
			c.send([]byte(s.raw))
			var all []string
			for {
				v, err := c.readWithin(2 * time.Second)
				if err != nil {
					break
				}
				all = append(all, v)
			}
			out[i] = strings.Join(all, "")
			if c.closed() {
				out[i] += "(closed)"
			}
		default:
			var all []string
			for range s.frames {
				all = append(all, c.read())
			}
			out[i] = strings.Join(all, "")
		}
		if s.door != "" && !door {
			out[i] = s.door
		}
	}
	return out
}

// sortArray sorts the bulk strings of an array reply (or of a SCAN
// reply's second element), which Redis orders by its hash table.
func sortArray(v string, pairs bool) string {
	lines := strings.Split(v, "\r\n")
	var head []string
	if strings.HasPrefix(v, "*2\r\n$") && len(lines) > 3 && strings.HasPrefix(lines[3], "*") { // SCAN: cursor, then keys
		head, lines = lines[:3], lines[3:]
	}
	n := len(lines) - 1 // after the last \r\n
	var items []string
	per := 2
	if pairs {
		per = 4
	}
	for i := 1; i+per-1 < n; i += per {
		items = append(items, strings.Join(lines[i:i+per], "\r\n"))
	}
	slices.Sort(items)
	return strings.Join(append(head, lines[0]), "\r\n") + "\r\n" + strings.Join(items, "\r\n") + func() string {
		if len(items) > 0 {
			return "\r\n"
		}
		return ""
	}()
}
