package doortest

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/internal/testutil"
)

// Contract checks that the door s configures keeps the contract every
// door keeps with the agent (package doorkit), each part a subtest. s is
// copied, never changed; its zero fields take their defaults. opts are
// Start's (WithEnv for what the door needs from its Env). Do not run it
// beside parallel tests: it checks for leaked goroutines.
func Contract(t *testing.T, s doorkit.Settings, opts ...Option) {
	t.Run("spec", func(t *testing.T) {
		if err := checkSpec(s); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("off binds nothing", func(t *testing.T) {
		if clone(s).Door().Required {
			t.Skip("the door cannot be turned off")
		}
		if err := checkOff(s); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a failed bind closes what was bound", func(t *testing.T) {
		if err := checkFailedBind(s); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("serves, closes, leaks nothing", func(t *testing.T) {
		testutil.CheckLeaks(t)
		if err := checkServe(s, opts); err != nil {
			t.Fatal(err)
		}
	})
}

// checkSpec: every part of the Spec is there, and the defaults validate.
func checkSpec(s doorkit.Settings) error {
	spec := clone(s).Door()
	if spec.Name == "" || spec.Addr == nil || spec.Defaults == nil || spec.Validate == nil || spec.Bind == nil || spec.Start == nil {
		return fmt.Errorf("incomplete Spec: Name %q; Addr, Defaults, Validate, Bind, Start set: %v %v %v %v %v",
			spec.Name, spec.Addr != nil, spec.Defaults != nil, spec.Validate != nil, spec.Bind != nil, spec.Start != nil)
	}
	spec.Defaults()
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("the defaults do not validate: %w", err)
	}
	return nil
}

// checkOff: "off" validates and binds no listener.
func checkOff(s doorkit.Settings) error {
	spec := clone(s).Door()
	*spec.Addr = "off"
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("off does not validate: %w", err)
	}
	b := &binder{}
	lns, err := spec.Bind(b)
	if err != nil || len(lns) > 0 || len(b.names) > 0 {
		return fmt.Errorf("off: Bind bound %q and returned %d listeners, %v; want none", b.names, len(lns), err)
	}
	return nil
}

// checkFailedBind: whichever listener cannot be bound, Bind returns the
// error (wrapped) and closes the listeners it bound before.
func checkFailedBind(s doorkit.Settings) error {
	names, err := listenerNames(s)
	if err != nil {
		return err
	}
	for _, name := range names {
		spec := clone(s).Door()
		*spec.Addr = "127.0.0.1:0"
		if err := spec.Validate(); err != nil {
			return err
		}
		b := &binder{fail: name}
		lns, err := spec.Bind(b)
		if !errors.Is(err, errTaken) {
			closeAll(b.made)
			return fmt.Errorf("listener %s taken: Bind returned %d listeners and %v, want the bind error wrapped", name, len(lns), err)
		}
		for _, ln := range b.made {
			if !closed(ln) {
				closeAll(b.made)
				return fmt.Errorf("listener %s taken: Bind left %s, bound before, open", name, ln.Addr())
			}
		}
	}
	return nil
}

// checkServe: the door serves on each listener it names in Addrs (its own
// name first, the real addresses), and Close closes them.
func checkServe(s doorkit.Settings, opts []Option) error {
	var lns []net.Listener
	listen := func(name, addr string) (net.Listener, error) {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			lns = append(lns, ln)
		}
		return ln, err
	}
	d, err := start(clone(s), append(slices.Clone(opts), Listen(listen)))
	if err != nil {
		return err
	}
	defer d.Close()
	addrs := d.Addrs()
	if len(addrs) != len(lns) || len(addrs) == 0 || addrs[0].Name != d.Spec.Name {
		return fmt.Errorf("Addrs %v for %d listeners, want one each, %q first", addrs, len(lns), d.Spec.Name)
	}
	for i, a := range addrs {
		if a.Addr != lns[i].Addr().String() {
			return fmt.Errorf("Addrs names %s at %s, its listener is at %s", a.Name, a.Addr, lns[i].Addr())
		}
		c, err := net.DialTimeout("tcp", a.Addr, 5*time.Second)
		if err != nil {
			return fmt.Errorf("%s at %s refuses a connection: %w", a.Name, a.Addr, err)
		}
		c.Close()
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	for _, ln := range lns {
		if !closed(ln) {
			return fmt.Errorf("%s still open after Close", ln.Addr())
		}
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("a second close: %w", err)
	}
	return nil
}

// listenerNames are the names of the listeners s's door binds when on.
func listenerNames(s doorkit.Settings) ([]string, error) {
	spec := clone(s).Door()
	*spec.Addr = "127.0.0.1:0"
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	b := &binder{}
	lns, err := spec.Bind(b)
	closeAll(lns)
	if err != nil {
		return nil, err
	}
	return b.names, nil
}

func closeAll(lns []net.Listener) {
	for _, ln := range lns {
		if ln != nil {
			ln.Close()
		}
	}
}

// clone is a copy of the settings s points to.
func clone(s doorkit.Settings) doorkit.Settings {
	v := reflect.ValueOf(s).Elem()
	c := reflect.New(v.Type())
	c.Elem().Set(v)
	return c.Interface().(doorkit.Settings)
}

// closed reports whether ln no longer accepts: Accept returns an error.
// An open listener is dialled so that Accept returns either way.
func closed(ln net.Listener) bool {
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err != nil
	case <-time.After(100 * time.Millisecond):
	}
	if c, err := net.Dial(ln.Addr().Network(), ln.Addr().String()); err == nil {
		c.Close()
	}
	select {
	case err := <-done:
		return err != nil
	case <-time.After(2 * time.Second): // someone else accepted it: open
		return false
	}
}
