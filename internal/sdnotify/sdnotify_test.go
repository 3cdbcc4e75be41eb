package sdnotify

import (
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// listen makes the socket a service manager would, at name (a path, or
// @name for the abstract namespace), and points NOTIFY_SOCKET at it.
func listen(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	addr := name
	if name[0] == '@' {
		addr = "\x00" + name[1:]
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", name)
	return conn
}

func receive(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no datagram: %v", err)
	}
	return string(buf[:n])
}

func TestNotifySendsOneDatagramPerMessage(t *testing.T) {
	for _, name := range []string{
		filepath.Join(t.TempDir(), "notify"),
		fmt.Sprintf("@namecast-sdnotify-test-%x", rand.Uint64()),
	} {
		conn := listen(t, name)
		msgs := []string{Ready, Status("synced with 3 members") + "\n" + Stopping}
		for _, msg := range msgs {
			if sent, err := Notify(msg); !sent || err != nil {
				t.Fatalf("%s: Notify(%q) = %v, %v", name, msg, sent, err)
			}
		}
		for _, want := range msgs {
			if got := receive(t, conn); got != want {
				t.Errorf("%s: received %q, want %q", name, got, want)
			}
		}
	}
}

func TestNotifyWithoutSocketDoesNothing(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if sent, err := Notify(Ready); sent || err != nil {
		t.Fatalf("Notify without NOTIFY_SOCKET = %v, %v; want false, nil", sent, err)
	}
}

func TestNotifyErrors(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "nobody-listens"))
	if sent, err := Notify(Ready); sent || err == nil {
		t.Errorf("no listener: %v, %v; want an error", sent, err)
	}
	t.Setenv("NOTIFY_SOCKET", "vsock:2:1234")
	if sent, err := Notify(Ready); sent || err == nil {
		t.Errorf("vsock: %v, %v; want an error naming what is supported", sent, err)
	}
}

func TestStatusIsOneLine(t *testing.T) {
	if got := Status("a\nb"); got != "STATUS=a b" {
		t.Errorf("Status = %q", got)
	}
}
