package doortest

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/namecast/namecast/agent/doorkit"
)

// fakeSettings configure a door of two listeners, "fake" and "fake-2",
// that can break the contract in the ways its fields say.
type fakeSettings struct {
	Addr           string
	leakOnFail     bool // a failed second bind leaves the first open
	leaveOpen      bool // Close leaves the second listener open
	wrongName      bool // Addrs names the second listener first
	noValidate     bool
	offBindsAnyway bool
	bound          *[]net.Listener // every listener the door was given
}

func (s *fakeSettings) Door() doorkit.Spec {
	spec := doorkit.Spec{
		Name:     "fake",
		Addr:     &s.Addr,
		Defaults: func() { s.Addr = "127.0.0.1:0" },
		Validate: func() error { return nil },
		Bind: func(b doorkit.Binder) ([]net.Listener, error) {
			if !doorkit.On(s.Addr) && !s.offBindsAnyway {
				return nil, nil
			}
			first, err := b.Bind("fake", "fake", s.Addr, "")
			if err != nil {
				return nil, err
			}
			second, err := b.Bind("fake-2", "fake", "127.0.0.1:0", "")
			if err != nil {
				if !s.leakOnFail {
					first.Close()
				}
				return nil, err
			}
			return []net.Listener{first, second}, nil
		},
		Start: func(env doorkit.Env, lns []net.Listener) (doorkit.Door, error) {
			d := &fakeDoor{s: s, lns: lns}
			if s.bound != nil {
				*s.bound = append(*s.bound, lns...)
			}
			for _, ln := range lns {
				d.wg.Go(func() {
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						c.Close()
					}
				})
			}
			return d, nil
		},
	}
	if s.noValidate {
		spec.Validate = nil
	}
	return spec
}

type fakeDoor struct {
	s   *fakeSettings
	lns []net.Listener
	wg  sync.WaitGroup
}

func (d *fakeDoor) Addrs() []doorkit.Addr {
	a := []doorkit.Addr{{Name: "fake", Addr: d.lns[0].Addr().String()}, {Name: "fake-2", Addr: d.lns[1].Addr().String()}}
	if d.s.wrongName {
		a[0], a[1] = a[1], a[0]
	}
	return a
}

func (d *fakeDoor) Close() error {
	d.lns[0].Close()
	if d.s.leaveOpen {
		return nil
	}
	d.lns[1].Close()
	d.wg.Wait()
	return nil
}

// The contract holds for a door that keeps it, and each check fails on a
// door that breaks its part.
func TestContractFailsADoorThatBreaksIt(t *testing.T) {
	Contract(t, &fakeSettings{})
	var bound []net.Listener
	defer func() { closeAll(bound) }()
	for _, c := range []struct {
		name  string
		check func() error
		want  string
	}{
		{"no Validate", func() error { return checkSpec(&fakeSettings{noValidate: true}) }, "incomplete Spec"},
		{"off binds", func() error { return checkOff(&fakeSettings{offBindsAnyway: true}) }, `off: Bind bound ["fake"]`},
		{"leaks on a failed bind", func() error { return checkFailedBind(&fakeSettings{leakOnFail: true}) }, "listener fake-2 taken: Bind left"},
		{"names another first", func() error { return checkServe(&fakeSettings{wrongName: true}, nil) }, `"fake" first`},
		{"Close leaves one open", func() error { return checkServe(&fakeSettings{leaveOpen: true, bound: &bound}, nil) }, "still open after Close"},
	} {
		err := c.check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// Start hands the door the host and Env it was given.
func TestStartUsesTheHostGiven(t *testing.T) {
	d := Start(t, &fakeSettings{}, WithEnv(func(e *doorkit.Env) { e.Node = "n1" }))
	if d.Host == nil || d.Addr("fake-2") == "" || d.Addr("") != d.Addr("fake") {
		t.Fatalf("host %v, addrs %v", d.Host, d.Addrs())
	}
}
