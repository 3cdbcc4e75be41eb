package agent

import (
	"errors"
	"log/slog"
	"net"
	"slices"
	"testing"

	"github.com/namecast/namecast/agent/doorkit"
	"github.com/namecast/namecast/agent/listener"
)

// fakeDoor records its start and close in log.
type fakeDoor struct {
	name string
	ln   net.Listener
	log  *[]string
}

func (d *fakeDoor) Addrs() []doorkit.Addr {
	return []doorkit.Addr{{Name: d.name, Addr: d.ln.Addr().String()}}
}
func (d *fakeDoor) Close() error {
	*d.log = append(*d.log, "close "+d.name)
	return d.ln.Close()
}

func fakeSpec(name string, log *[]string, failStart bool) doorkit.Spec {
	return doorkit.Spec{
		Name: name,
		Bind: func(b doorkit.Binder) ([]net.Listener, error) {
			ln, err := b.Bind(name, name, "127.0.0.1:0", "")
			return []net.Listener{ln}, err
		},
		Start: func(_ doorkit.Env, lns []net.Listener) (doorkit.Door, error) {
			if failStart {
				return nil, errors.New("refused")
			}
			*log = append(*log, "start "+name)
			return &fakeDoor{name: name, ln: lns[0], log: log}, nil
		},
	}
}

// The doors start in their order and close in reverse; a door that fails
// to start fails the start, and what bound but never started has its
// listeners closed.
func TestDoorsStartInOrderAndCloseInReverse(t *testing.T) {
	var log []string
	lns := map[string]*listener.Memory{}
	listen := func(name, _ string) (net.Listener, error) {
		lns[name] = listener.NewMemory(name)
		return lns[name], nil
	}
	var s doorSet
	specs := []doorkit.Spec{fakeSpec("one", &log, false), fakeSpec("two", &log, false), fakeSpec("three", &log, true)}
	if err := s.bind(specs, listen, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if got := s.addr("two"); got != "mem:two" {
		t.Errorf("a bound door's address before it starts = %q, want mem:two", got)
	}
	err := s.start(doorkit.Env{}, nil)
	if err == nil || err.Error() != "three: refused" {
		t.Fatalf("start = %v, want three's refusal, named", err)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"start one", "start two", "close two", "close one"}; !slices.Equal(log, want) {
		t.Errorf("doors ran %q, want %q", log, want)
	}
	if _, err := lns["three"].Dial(t.Context()); err == nil {
		t.Error("the listener of the door that never started is still open")
	}
}
