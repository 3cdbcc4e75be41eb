// Package doortest is the kit a door's own tests are written with: it
// starts a door the way the agent does, over a fake host, and checks the
// contract every door keeps with the agent (package doorkit).
//
//   - Start starts the door its settings configure through its Spec
//     (Validate, Bind, Start) over a hosttest.Fake, on loopback port 0
//     unless the settings say otherwise, and closes it when the test
//     ends. Options hand in the host, the listeners (in-memory ones,
//     package listener), or change the Env.
//   - Contract checks, in one call from a door's test, what the agent
//     relies on: the Spec is complete, its defaults validate, "off" binds
//     nothing, a listener that cannot be bound fails the start with what
//     was bound closed, Addrs names the door's listeners (its own name
//     first) and each accepts, Close closes them, twice is safe, and no
//     goroutine is left behind.
//   - Serve serves a door's server (whatever has Serve(net.Listener)
//     and Close) on a loopback port until the test ends, for tests that
//     build the server from its own Config rather than its settings.
//
// It must be called from the test's goroutine, like t.Fatal.
package doortest

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"testing"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/routes"
)

// Door is a door Start started.
type Door struct {
	doorkit.Door
	// Spec is the door's registration, made from the settings given.
	Spec doorkit.Spec
	// Host is the fake host the door was given.
	Host *hosttest.Fake
}

// Addr is where the door's listener named name listens ("" when it has
// none by that name); Addr("") is its first listener's.
func (d *Door) Addr(name string) string {
	for _, a := range d.Addrs() {
		if name == "" || a.Name == name {
			return a.Addr
		}
	}
	return ""
}

// An Option changes how Start starts the door.
type Option func(*options)

type options struct {
	host   *hosttest.Fake
	listen func(name, addr string) (net.Listener, error)
	env    func(*doorkit.Env)
}

// WithHost gives the door h (a hosttest.Cluster member, a Fake with
// leases to restore, ...) instead of a fresh one.
func WithHost(h *hosttest.Fake) Option { return func(o *options) { o.host = h } }

// Listen binds the door's listeners with listen (as agent.Config.Listen
// does: name is the listener's, addr the address its settings give),
// instead of TCP.
func Listen(listen func(name, addr string) (net.Listener, error)) Option {
	return func(o *options) { o.listen = listen }
}

// WithEnv changes the Env the door starts with (Node, Metrics,
// ReadyWait, Agent) after Start has filled it in.
func WithEnv(f func(*doorkit.Env)) Option { return func(o *options) { o.env = f } }

// Logger is what a door's tests log to: stderr at debug level when
// NAMECAST_TEST_LOG is set, nothing otherwise.
func Logger() *slog.Logger {
	if os.Getenv("NAMECAST_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// Start starts the door s configures, as the agent does, and closes it
// when the test ends. A door whose address setting is empty listens on
// 127.0.0.1:0; settings left at zero take their defaults (Validate).
func Start(t testing.TB, s doorkit.Settings, opts ...Option) *Door {
	t.Helper()
	d, err := start(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("%s: close: %v", d.Spec.Name, err)
		}
	})
	return d
}

func start(s doorkit.Settings, opts []Option) (*Door, error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	spec := s.Door()
	if *spec.Addr == "" {
		*spec.Addr = "127.0.0.1:0"
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("%s: settings: %w", spec.Name, err)
	}
	lns, err := spec.Bind(&binder{listen: o.listen})
	if err != nil {
		return nil, fmt.Errorf("%s: binding its listeners: %w", spec.Name, err)
	}
	if len(lns) == 0 {
		return nil, fmt.Errorf("%s: bound no listener (is its address %q off?)", spec.Name, *spec.Addr)
	}
	h := o.host
	if h == nil {
		h = hosttest.New(routes.NewTable("local", 1))
	}
	env := doorkit.Env{Host: h, Node: h.Routes.Local(), Logger: Logger()}
	if o.env != nil {
		o.env(&env)
	}
	d, err := spec.Start(env, lns)
	if err != nil {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, fmt.Errorf("%s: start: %w", spec.Name, err)
	}
	return &Door{Door: d, Spec: spec, Host: h}, nil
}

// binder binds with listen (nil: TCP) and keeps every listener it made.
type binder struct {
	listen func(name, addr string) (net.Listener, error)
	fail   string // a listener name whose Bind fails
	names  []string
	made   []net.Listener
}

var errTaken = errors.New("doortest: taken")

func (b *binder) Bind(name, flag, addr, exposed string) (net.Listener, error) {
	b.names = append(b.names, name)
	if name == b.fail {
		return nil, errTaken
	}
	var ln net.Listener
	var err error
	if b.listen != nil {
		ln, err = b.listen(name, addr)
	} else {
		ln, err = net.Listen("tcp", addr)
	}
	if err == nil {
		b.made = append(b.made, ln)
	}
	return ln, err
}

// Server is a door's server built from its own Config.
type Server interface {
	Serve(ln net.Listener) error
	Close() error
}

// Serve serves s on a free loopback port until the test ends, as the
// agent serves a door: it binds the listener and hands it to Serve, which
// then owns it.
func Serve(t testing.TB, s Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
}
