// Package doorkit is how a door registers with the agent: what it is called,
// its block of the agent's configuration, the listeners it needs and how
// it starts. The agent (package agent) spells no door's name: it finds the
// doors in its Config, binds their listeners, starts them in order and
// closes them in reverse, as tailscale's extension host does.
//
// A door is registered by embedding its settings in agent.Config, in the
// order the doors start: the settings type's Door method says the rest
// (Spec). Adding a door is its package, that one line, and its flag in
// cmd/namecast.
//
// Every door keeps the same contract with the agent:
//
//   - Bind binds every listener the door serves on through the Binder it
//     is given (Config.Listen, or TCP; tests hand in in-memory listeners)
//     before gossip starts, so a taken port fails the start before this
//     agent joins anyone. A door that is off binds none and is not
//     started.
//   - Start builds the door on the listeners Bind returned, which it then
//     owns, and serves them before it returns. Before it serves, the door
//     takes back the leases it held before a restart (package lease), so
//     that the agent can then withdraw those no door claimed.
//   - Addrs names each listener the door serves on and its address (with
//     the real port), as GET /v1/agent shows them.
//   - Close stops accepting, closes every connection and waits for every
//     goroutine the door started. It withdraws nothing: the agent is going
//     away, and its records go with it (or come back with its restart).
//     Safe to call more than once.
//
// The connections a door accepts are a conns.Set (package conns): it
// refuses a connection past the door's bound, in the door's words, and
// its Close is how the door's Close closes the listener and every
// connection. The Nacos door's HTTP port's are net/http's alone.
//
// A door's own tests start it with package doortest, over the fake host
// of package hosttest, and check this contract with doortest.Contract.
package doorkit

import (
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/host"
)

// Settings is a door's block of agent.Config (embedded in it; its JSON
// keys are the config file's and match the door's flags).
type Settings interface {
	// Door describes the door these settings configure. The Spec's funcs
	// read and write the settings it was made from.
	Door() Spec
}

// Spec is one door as the agent sees it.
type Spec struct {
	// Name is the door's flag, its name to the host (host.Local.For) and
	// its first listener's name.
	Name string
	// Addr is the setting that says where the door's first listener
	// listens, or "off" (the door's flag).
	Addr *string
	// Defaults sets the production defaults (agent.DefaultConfig).
	Defaults func()
	// Validate checks the settings and returns the first problem, phrased
	// as a fix; it writes in the default of a setting left at zero, so
	// GET /v1/agent shows the value in force.
	Validate func() error
	// Redact replaces the secrets among the settings by redacted, for
	// GET /v1/agent; nil: there are none.
	Redact func(redacted string)
	// Bind binds the door's listeners; none when the door is off.
	Bind func(Binder) ([]net.Listener, error)
	// Start builds the door and serves it on lns.
	Start func(env Env, lns []net.Listener) (Door, error)
	// Required, when true, says the door cannot be turned off (the HTTP
	// API); a bind error then advises no --Name off.
	Required bool
	// Advertised, when true, publishes the door's first listener's
	// address to peers under Name (gossip tags): the HTTP API's, which
	// joining agents and the web UI reach a peer by.
	Advertised bool
}

// Door is a door that runs.
type Door interface {
	// Addrs names each listener and its address: Name's first.
	Addrs() []Addr
	Close() error
}

// Addr is one listener of a door and where it listens.
type Addr struct {
	Name string // "nacos-grpc": a door's listener name, as Binder.Bind was given
	Addr string
}

// A Binder binds the listener named name (Config.Listen's name: the
// door's, or "nacos-grpc" for a second one) at addr; flag is the flag
// that sets addr, named in the error's advice, and exposed, when addr is
// reachable from the network, is logged as a warning: what anyone who
// connects can then do.
type Binder interface {
	Bind(name, flag, addr, exposed string) (net.Listener, error)
}

// Env is what the agent gives a door to start with.
type Env struct {
	Host    host.Host // the door's view of the agent's host (host.Local.For(Name))
	Node    string    // the agent's node name
	Logger  *slog.Logger
	Metrics *metrics.Metrics
	// ReadyWait bounds how long an agent that expects peers says it is
	// not ready while it finds none (a door that waits for readiness
	// waits no longer).
	ReadyWait time.Duration
	// Agent is what the HTTP API asks of its agent (httpapi.Agent).
	Agent any
}

// On reports whether a door's address setting turns it on: "" and "off"
// turn it off.
func On(addr string) bool { return addr != "" && addr != "off" }
