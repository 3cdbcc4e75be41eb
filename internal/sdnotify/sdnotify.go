// Package sdnotify tells the service manager that started this process
// about its state, as sd_notify(3) does, with the standard library only:
// systemd passes a datagram socket's path in $NOTIFY_SOCKET, and the
// service sends it newline-separated VAR=value assignments, one datagram
// per message. A unit with Type=notify counts as started only once the
// service sends READY=1.
//
// Outside such a supervisor (NOTIFY_SOCKET unset) every call does nothing.
package sdnotify

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// The states namecast sends.
const (
	// Ready: startup is finished; for the agent, its first sync with the
	// cluster is done, so its doors answer from a full table.
	Ready = "READY=1"
	// Stopping: the service is shutting down.
	Stopping = "STOPPING=1"
)

// Status is a one-line description shown by systemctl status.
func Status(s string) string {
	return "STATUS=" + strings.ReplaceAll(s, "\n", " ")
}

// Notify sends state (one or more VAR=value lines) to $NOTIFY_SOCKET. It
// reports whether it sent anything: false with a nil error when the
// variable is unset.
func Notify(state string) (bool, error) {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return false, nil
	}
	switch {
	case path[0] == '@':
		// A socket in Linux's abstract namespace: its name starts with a
		// NUL byte, which the variable cannot carry.
		path = "\x00" + path[1:]
	case path[0] != '/':
		return false, fmt.Errorf("NOTIFY_SOCKET %q: only a path or an abstract socket (@name) is supported", path)
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return false, fmt.Errorf("NOTIFY_SOCKET: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return false, fmt.Errorf("NOTIFY_SOCKET: %w", err)
	}
	return true, nil
}
