package main

import (
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/namecast/namecast/agent"
)

// Under systemd (Type=notify) the agent says READY=1 once it has synced
// with the cluster, not when its ports are bound, and STOPPING=1 when a
// signal stops it. The service manager's socket is a unixgram socket here.
func TestAgentNotifiesServiceManager(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	ta := newTestAgents(t)
	first := ta.mustStart(ta.config("first"))
	t.Setenv("NOTIFY_SOCKET", sock)
	a, err := agent.New(ta.config("second", first.GossipAddr()))
	if err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 1)
	served := make(chan error, 1)
	go func() { served <- serveUntilSignal(a, slog.New(slog.NewTextHandler(io.Discard, nil)), sigs, false) }()

	read := func() string {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf := make([]byte, 4096)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no notification: %v", err)
		}
		return string(buf[:n])
	}
	msg := read()
	if !strings.HasPrefix(msg, "READY=1\n") || !strings.Contains(msg, "STATUS=synced; 2 members alive") {
		t.Errorf("first notification %q, want READY=1 and a status", msg)
	}
	if !a.Ready() {
		t.Error("READY=1 sent before the agent's first sync")
	}
	sigs <- syscall.SIGTERM
	if msg := read(); msg != "STOPPING=1" {
		t.Errorf("after SIGTERM: %q, want STOPPING=1", msg)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not stop")
	}
}
