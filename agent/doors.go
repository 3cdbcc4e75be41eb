package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"reflect"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/host"
)

// The doors are the protocols the agent serves its clients with (package
// doorkit says the contract). Config embeds each door's settings in the
// order the doors start; the agent binds every door's listeners before
// gossip starts, starts the doors once the host runs and before the
// restored leases no door claimed are withdrawn, and closes them in
// reverse order.

// Doors are the doors whose settings c embeds, in their order there; their
// funcs read and write c.
func (c *Config) Doors() []doorkit.Spec {
	var specs []doorkit.Spec
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).Anonymous {
			continue
		}
		if s, ok := v.Field(i).Addr().Interface().(doorkit.Settings); ok {
			specs = append(specs, s.Door())
		}
	}
	return specs
}

// doorSet is the agent's doors, in Config's order.
type doorSet struct {
	list []*aDoor
}

// aDoor is one registered door: its listeners once bound, the door once
// it runs.
type aDoor struct {
	spec doorkit.Spec
	lns  []net.Listener
	door doorkit.Door
}

// bind binds every door's listeners with listen (Config.Listen; nil: TCP),
// warning on log of those reachable from the network.
func (s *doorSet) bind(specs []doorkit.Spec, listen func(name, addr string) (net.Listener, error), log *slog.Logger) error {
	for _, spec := range specs {
		d := &aDoor{spec: spec}
		s.list = append(s.list, d)
		lns, err := spec.Bind(binder{spec, listen, log})
		if err != nil {
			return err
		}
		d.lns = lns
	}
	return nil
}

// start starts, in order, every door that bound a listener, each given env
// with its own view of h (nil: none).
func (s *doorSet) start(env doorkit.Env, h *host.Local) error {
	for _, d := range s.list {
		if len(d.lns) == 0 {
			continue
		}
		if h != nil {
			env.Host = h.For(d.spec.Name)
		}
		door, err := d.spec.Start(env, d.lns)
		if err != nil {
			return fmt.Errorf("%s: %w", d.spec.Name, err)
		}
		d.door = door
	}
	return nil
}

// close closes the doors in reverse order, and the listeners of any that
// never started.
func (s *doorSet) close() error {
	var err error
	for i := len(s.list) - 1; i >= 0; i-- {
		d := s.list[i]
		if d.door != nil {
			err = errors.Join(err, d.door.Close())
			continue
		}
		for _, ln := range d.lns {
			if ln != nil {
				ln.Close()
			}
		}
	}
	return err
}

// addr is where the listener named name serves, or "".
func (s *doorSet) addr(name string) string {
	for _, d := range s.list {
		if d.door != nil {
			for _, addr := range d.door.Addrs() {
				if addr.Name == name {
					return addr.Addr
				}
			}
		} else if d.spec.Name == name && len(d.lns) > 0 { // bound, not started yet
			return d.lns[0].Addr().String()
		}
	}
	return ""
}

// addrs are the listeners of the doors that run, in their order.
func (s *doorSet) addrs() []doorkit.Addr {
	var out []doorkit.Addr
	for _, d := range s.list {
		if d.door != nil {
			out = append(out, d.door.Addrs()...)
		}
	}
	return out
}

// advertised are the addresses published to peers (gossip tags), by door
// name: the doors' that say they are (Spec.Advertised).
func (s *doorSet) advertised() map[string]string {
	t := map[string]string{}
	for _, d := range s.list {
		if d.spec.Advertised {
			t[d.spec.Name] = s.addr(d.spec.Name)
		}
	}
	return t
}

// binder binds one door's listeners (and the --metrics listener) with
// listen (Config.Listen; nil: TCP).
type binder struct {
	spec   doorkit.Spec
	listen func(name, addr string) (net.Listener, error)
	log    *slog.Logger
}

func (b binder) Bind(name, flag, addr, exposed string) (net.Listener, error) {
	listen := b.listen
	if listen == nil {
		listen = func(_, addr string) (net.Listener, error) { return net.Listen("tcp", addr) }
	}
	ln, err := listen(name, addr)
	if err != nil {
		advice := fmt.Sprintf("another agent or server may hold it; pick another address with --%s HOST:PORT", flag)
		if !b.spec.Required {
			advice += fmt.Sprintf(", or turn the door off with --%s off", flag)
		}
		return nil, fmt.Errorf("%s port %s: %w (%s)", name, addr, err, advice)
	}
	if host, _, _ := splitHostPort(addr); exposed != "" && !isLoopback(host) {
		b.log.Warn(exposed, name, ln.Addr().String())
	}
	return ln, nil
}
