package redis

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/doorkit/doortest"
	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/redis/resp"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// startDoor serves a door over a fake host of one table on a loopback
// port until the test ends.
func startDoor(t testing.TB, cfg Config) (*Server, *hosttest.Fake) {
	t.Helper()
	f, ok := cfg.Host.(*hosttest.Fake)
	if cfg.Host == nil {
		f, ok = hosttest.New(routes.NewTable("local", 1)), true
		cfg.Host = f
	}
	if !ok {
		f = nil
	}
	s := NewServer(cfg)
	doortest.Serve(t, s)
	return s, f
}

// requireInterop says whether a missing redis-server fails the test
// (NAMECAST_INTEROP=require, as CI sets it) rather than skipping it.
func requireInterop() bool { return os.Getenv("NAMECAST_INTEROP") == "require" }

// startRedis runs Debian's redis-server 7.0 on a Unix socket of its own
// (no TCP port to collide on) until the test ends, and returns a dialer.
func startRedis(t testing.TB, args ...string) func() (net.Conn, error) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if requireInterop() {
			t.Fatalf("redis-server is required (NAMECAST_INTEROP=require): %v", err)
		}
		t.Skipf("redis-server not installed (apt-get install redis-server): %v", err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, append([]string{"--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no"}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	dial := func() (net.Conn, error) { return net.Dial("unix", sock) }
	testutil.Eventually(t, 10*time.Second, func() error {
		c, err := dial()
		if err != nil {
			return err
		}
		return c.Close()
	})
	return dial
}

// client speaks RESP to a server: commands out, whole replies in.
type client struct {
	t  testing.TB
	nc net.Conn
	r  *bufio.Reader
}

func dialClient(t testing.TB, dial func() (net.Conn, error)) *client {
	t.Helper()
	nc, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &client{t: t, nc: nc, r: bufio.NewReader(nc)}
}

func tcp(addr string) func() (net.Conn, error) {
	return func() (net.Conn, error) { return net.Dial("tcp", addr) }
}

func frame(args ...string) []byte {
	b := resp.Array(nil, len(args))
	for _, a := range args {
		b = resp.Bulk(b, a)
	}
	return b
}

func (c *client) send(b []byte) {
	c.t.Helper()
	c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one reply; "" and an error when none comes within d.
func (c *client) readWithin(d time.Duration) (string, error) {
	c.nc.SetReadDeadline(time.Now().Add(d))
	v, err := resp.ReadValue(c.r)
	return string(v), err
}

func (c *client) read() string {
	c.t.Helper()
	v, err := c.readWithin(10 * time.Second)
	if err != nil {
		c.t.Fatalf("no reply: %v (read %q)", err, v)
	}
	return v
}

// do sends one command and reads its reply.
func (c *client) do(args ...string) string {
	c.t.Helper()
	c.send(frame(args...))
	return c.read()
}

// closed reports whether the server closed the connection (after what it
// had to say).
func (c *client) closed() bool {
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.r.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// quoted shows a reply as its frames, one a line, for failure messages.
func quoted(s string) string {
	return strings.ReplaceAll(fmt.Sprintf("%q", s), `\r\n`, `\r\n `)
}
