package testutil

import (
	"net"
	"testing"
)

// Door is a door's side of its contract with the agent (package
// doorkit): it serves on a listener it is handed, and Close stops it.
type Door interface {
	Serve(ln net.Listener) error
	Close() error
}

// ServeDoor serves d on a free loopback port until the test ends, as the
// agent serves a door: it binds the listener and hands it to Serve, which
// then owns it. d's Addr says where.
func ServeDoor(t testing.TB, d Door) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Serve(ln); err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
}
