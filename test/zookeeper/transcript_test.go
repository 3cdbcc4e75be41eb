package zookeeper_test

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// A transcript is what one server answered to the differential script:
// one entry per step, values normalised so that two correct servers give
// the same text (no zxids, times or session ids, only their relations).
type transcript struct {
	entries []entry
}

type entry struct {
	step, value string
	mask        string // name of the deviation (deviations_test.go) that covers this step, if any
}

func (tr *transcript) add(step, value string) { tr.addMasked(step, value, "") }

func (tr *transcript) addMasked(step, value, mask string) {
	tr.entries = append(tr.entries, entry{step: step, value: value, mask: mask})
}

func (tr *transcript) String() string {
	var b strings.Builder
	for _, e := range tr.entries {
		if e.mask != "" {
			fmt.Fprintf(&b, "%s => %s   [deviation %s]\n", e.step, e.value, e.mask)
		} else {
			fmt.Fprintf(&b, "%s => %s\n", e.step, e.value)
		}
	}
	return b.String()
}

// errName names a go-zookeeper error by ZooKeeper's code.
func errName(err error) string {
	if err == nil {
		return "OK"
	}
	for _, k := range []struct {
		err  error
		name string
	}{
		{zk.ErrNoNode, "NONODE"}, {zk.ErrNodeExists, "NODEEXISTS"}, {zk.ErrNotEmpty, "NOTEMPTY"},
		{zk.ErrBadVersion, "BADVERSION"}, {zk.ErrNoChildrenForEphemerals, "NOCHILDRENFOREPHEMERALS"},
		{zk.ErrInvalidACL, "INVALIDACL"}, {zk.ErrBadArguments, "BADARGUMENTS"},
		{zk.ErrSessionExpired, "SESSIONEXPIRED"}, {zk.ErrNoAuth, "NOAUTH"},
		{zk.ErrConnectionClosed, "CONNECTIONCLOSED"},
	} {
		if errors.Is(err, k.err) {
			return k.name
		}
	}
	switch err.Error() { // codes go-zookeeper v1.0.4 has no variable for
	case "unknown error: -6":
		return "UNIMPLEMENTED"
	case "unknown error: -5":
		return "MARSHALLINGERROR"
	}
	return "error(" + err.Error() + ")"
}

// owners names ephemeralOwner values by the sessions of the script.
type owners map[int64]string

func (o owners) name(id int64) string {
	switch {
	case id == 0:
		return "none"
	case id == -0x8000000000000000:
		return "container"
	}
	if n, ok := o[id]; ok {
		return n
	}
	return "other-session"
}

// statText keeps the Stat fields two servers must agree on; cversion is
// reported apart (the agent derives it from the child set, §7.2).
func statText(st *zk.Stat, o owners) string {
	if st == nil {
		return "stat=nil"
	}
	return fmt.Sprintf("version=%d dataLength=%d numChildren=%d owner=%s mzxid>=czxid=%t pzxid>=czxid=%t mtime>=ctime=%t",
		st.Version, st.DataLength, st.NumChildren, o.name(st.EphemeralOwner),
		st.Mzxid >= st.Czxid, st.Pzxid >= st.Czxid, st.Mtime >= st.Ctime)
}

func childrenText(ch []string) string {
	ch = append([]string(nil), ch...)
	sort.Strings(ch) // ZooKeeper returns a HashSet's order
	return "[" + strings.Join(ch, " ") + "]"
}

// eventWait bounds how long a watch may take to fire. Changes here are
// made on the same server as the watch, so this only absorbs a busy host.
const eventWait = 15 * time.Second

func eventText(ch <-chan zk.Event) string {
	select {
	case ev, ok := <-ch:
		if !ok {
			return "channel closed"
		}
		return fmt.Sprintf("event %s %s state=%d err=%v", ev.Type, ev.Path, int32(ev.State), ev.Err)
	case <-time.After(eventWait):
		return fmt.Sprintf("no event within %v", eventWait)
	}
}

// session is one go-zookeeper client whose TCP connection the script can
// cut (and keep cut) to exercise re-attach and expiry.
type session struct {
	*zk.Conn
	events <-chan zk.Event
	gate   *gate
	log    *timeoutLog
}

func connect(t testing.TB, addr string, timeout time.Duration) *session {
	t.Helper()
	g := &gate{}
	l := &timeoutLog{}
	c, ev, err := zk.Connect([]string{addr}, timeout, zk.WithDialer(g.dial), zk.WithLogger(l))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	s := &session{Conn: c, events: ev, gate: g, log: l}
	s.waitState(t, zk.StateHasSession)
	return s
}

// waitState consumes session events until state arrives.
func (s *session) waitState(t testing.TB, want zk.State) bool {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev := <-s.events:
			if ev.State == want {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// gate is a dialer the test can shut: cut closes the live connection and
// refuses new ones until open.
type gate struct {
	mu    sync.Mutex
	shut  bool
	conns []net.Conn
}

func (g *gate) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		return nil, errors.New("gate shut by the test")
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err == nil {
		g.conns = append(g.conns, c)
	}
	return c, err
}

func (g *gate) cut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = true
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = false
}

// timeoutLog captures go-zookeeper's "authenticated: id=…, timeout=…"
// line: the client exports no getter for the negotiated timeout.
type timeoutLog struct {
	mu      sync.Mutex
	timeout int
}

func (l *timeoutLog) Printf(format string, args ...interface{}) {
	if strings.HasPrefix(format, "authenticated:") && len(args) == 2 {
		if ms, ok := args[1].(int32); ok {
			l.mu.Lock()
			l.timeout = int(ms)
			l.mu.Unlock()
		}
	}
}

// negotiated waits for the line: go-zookeeper logs it just after it
// reports StateHasSession.
func (l *timeoutLog) negotiated() int {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		l.mu.Lock()
		ms := l.timeout
		l.mu.Unlock()
		if ms != 0 || time.Now().After(deadline) {
			return ms
		}
	}
}
