package redis

import (
	"net"
	"os/exec"
	"strings"
	"testing"
)

// redis-cli (Debian's redis-tools 7.0) prints the same for the door as
// for redis-server 7.0, command by command, as an operator would type
// them.
func TestRedisCliAgainstRedis7(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		if requireInterop() {
			t.Fatalf("redis-cli is required (NAMECAST_INTEROP=require): %v", err)
		}
		t.Skipf("redis-cli not installed (apt-get install redis-tools): %v", err)
	}
	dialRedis := startRedis(t)
	c, _ := dialRedis()
	sock := c.RemoteAddr().String()
	c.Close()
	srv, _ := startDoor(t, Config{})
	host, port, _ := net.SplitHostPort(srv.Addr())
	run := func(target []string, args ...string) string {
		out, err := exec.Command(cli, append(target, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %q: %v: %s", args, err, out)
		}
		return string(out)
	}
	for _, args := range [][]string{
		{"PING"}, {"ECHO", "hello world"}, {"HSET", barKey, provider1, later}, {"HSET", barKey, provider1, later2},
		{"HGET", barKey, provider1}, {"HGETALL", barKey}, {"HLEN", barKey}, {"TYPE", barKey}, {"KEYS", "*"},
		{"SCAN", "0", "MATCH", "/dubbo/*"}, {"EXISTS", barKey}, {"PUBLISH", barKey, "register"}, {"HGET", barKey, "nope"},
		{"FOO", "bar"}, {"HSET", barKey}, {"SELECT", "99"}, {"HDEL", barKey, provider1}, {"DEL", barKey}, {"HGETALL", barKey},
		{"--no-raw", "HGETALL", barKey}, {"--no-raw", "KEYS", "*"}, {"--no-raw", "HGET", barKey, "nope"},
	} {
		want := run([]string{"-s", sock}, args...)
		got := run([]string{"-h", host, "-p", port}, args...)
		if got != want {
			t.Errorf("redis-cli %s:\ndoor:\n%s\nredis-server 7.0:\n%s", strings.Join(args, " "), got, want)
		}
	}
}
