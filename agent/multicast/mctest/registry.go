// Package mctest is a Dubbo multicast registry client for tests: a Go
// rendering of apache/dubbo 3.3.1's MulticastRegistry
// (dubbo-registry/dubbo-registry-multicast/src/main/java/org/apache/dubbo/registry/multicast/MulticastRegistry.java,
// docs/protocols/multicast.md), step for step, so that a test of the
// multicast door talks to it as a Dubbo process would. It parses
// datagrams itself, as the Java receiver does, not with the door's
// package mcwire. What it leaves out: the failback retries, the cache
// file and the admin clean-up timer.
package mctest

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/namecast/namecast/dubbo"
)

// Registry is one Dubbo process's MulticastRegistry.
type Registry struct {
	conn      *net.UDPConn
	group     netip.AddrPort
	localHost netip.Addr // NetUtils.getLocalHost()

	mu         sync.Mutex
	registered map[string]dubbo.URL            // getRegistered()
	subscribed map[string]*Subscription        // getSubscribed(), by subscriber URL
	received   map[string]map[string]dubbo.URL // received, by subscriber URL
	done       chan struct{}
}

// Subscription is one subscribe's listener: each notification (the full
// set heard, or one empty:// URL) arrives on Notified.
type Subscription struct {
	url      dubbo.URL
	Notified chan []string
}

// Open is the constructor: a MulticastSocket on the group port
// (SO_REUSEADDR, as Java's), joined on ifi with loopback on
// (NetUtils.joinMulticastGroup: setInterface, setLoopbackMode(false),
// joinGroup), no TTL set; and the receiver thread. localHost is what
// NetUtils.getLocalHost() answers on this host.
func Open(group netip.AddrPort, ifi *net.Interface, localHost netip.Addr) (*Registry, error) {
	c, err := net.ListenMulticastUDP("udp4", ifi, net.UDPAddrFromAddrPort(group))
	if err != nil {
		return nil, err
	}
	rc, err := c.SyscallConn()
	if err == nil {
		var serr error
		err = rc.Control(func(fd uintptr) {
			// Go turns loopback off; Dubbo leaves it on.
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_MULTICAST_LOOP, 1)
			if serr == nil && ifi != nil {
				serr = syscall.SetsockoptIPMreqn(int(fd), syscall.IPPROTO_IP, syscall.IP_MULTICAST_IF, &syscall.IPMreqn{Ifindex: int32(ifi.Index)})
			}
		})
		if err == nil {
			err = serr
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	r := &Registry{conn: c, group: group, localHost: localHost, registered: map[string]dubbo.URL{},
		subscribed: map[string]*Subscription{}, received: map[string]map[string]dubbo.URL{}, done: make(chan struct{})}
	go r.receiveLoop()
	return r, nil
}

// Close is destroy(): the socket closes (the failback base's unregister
// of dynamic URLs is left to the test).
func (r *Registry) Close() {
	r.conn.Close()
	<-r.done
}

// receiveLoop is the receiver thread: a 2048-byte buffer, zeroed after
// each datagram; the text trimmed, cut at the first newline (when past
// index 0) and trimmed again.
func (r *Registry) receiveLoop() {
	defer close(r.done)
	buf := make([]byte, 2048)
	for {
		_, from, err := r.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		msg := javaTrim(string(buf))
		if i := strings.IndexByte(msg, '\n'); i > 0 {
			msg = javaTrim(msg[:i])
		}
		r.receive(msg, from)
		clear(buf)
	}
}

// javaTrim is String.trim: every character at or below ' ' off both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(c rune) bool { return c <= ' ' })
}

// receive is MulticastRegistry.receive: the verb by prefix, register
// before unregister before subscribe; unsubscribe is ignored.
func (r *Registry) receive(msg string, from netip.AddrPort) {
	switch {
	case strings.HasPrefix(msg, "register"):
		if u, err := dubbo.Parse(javaTrim(msg[len("register"):])); err == nil {
			r.registeredURL(u)
		}
	case strings.HasPrefix(msg, "unregister"):
		if u, err := dubbo.Parse(javaTrim(msg[len("unregister"):])); err == nil {
			r.unregisteredURL(u)
		}
	case strings.HasPrefix(msg, "subscribe"):
		sub, err := dubbo.Parse(javaTrim(msg[len("subscribe"):]))
		if err != nil {
			return
		}
		r.mu.Lock()
		var answers []dubbo.URL
		for _, u := range r.registered {
			if dubbo.Match(sub, u) {
				answers = append(answers, u)
			}
		}
		r.mu.Unlock()
		host := from.Addr().Unmap()
		for _, u := range answers {
			// "Whether the consumer's machine has only one process";
			// "multiple processes in the same machine cannot be unicast".
			if unicastParam(sub) && host != r.localHost {
				r.unicast("register "+u.String(), host)
			} else {
				r.multicast("register " + u.String())
			}
		}
	}
}

// unicastParam is url.getParameter("unicast", true).
func unicastParam(u dubbo.URL) bool {
	v := u.Param("unicast", "")
	return v == "" || strings.EqualFold(v, "true")
}

func (r *Registry) multicast(msg string) {
	r.conn.WriteToUDPAddrPort([]byte(msg+"\n"), r.group)
}

// unicast sends to host at the group port (multicastPort).
func (r *Registry) unicast(msg string, host netip.Addr) {
	r.conn.WriteToUDPAddrPort([]byte(msg+"\n"), netip.AddrPortFrom(host, r.group.Port()))
}

// Register is register(): doRegister multicasts, then registered()
// notifies this process's own matching subscribers.
func (r *Registry) Register(u dubbo.URL) {
	r.mu.Lock()
	r.registered[u.String()] = u
	r.mu.Unlock()
	r.multicast("register " + u.String())
	r.registeredURL(u)
}

// Unregister is unregister(): doUnregister multicasts, then
// unregistered().
func (r *Registry) Unregister(u dubbo.URL) {
	r.mu.Lock()
	delete(r.registered, u.String())
	r.mu.Unlock()
	r.multicast("unregister " + u.String())
	r.unregisteredURL(u)
}

// Subscribe is subscribe(): doSubscribe multicasts "subscribe" and waits
// up to timeout (the URL's, 1000 ms by default) for a first
// notification; then subscribed() notifies what lookup() finds (here:
// what was heard, or this process's own matching registrations).
func (r *Registry) Subscribe(u dubbo.URL) *Subscription {
	s := &Subscription{url: u, Notified: make(chan []string, 1024)}
	r.mu.Lock()
	r.subscribed[u.String()] = s
	r.mu.Unlock()
	r.multicast("subscribe " + u.String())
	timeout := 1000 * time.Millisecond
	if d, err := time.ParseDuration(u.Param("timeout", "") + "ms"); err == nil {
		timeout = d
	}
	select {
	case <-time.After(timeout):
	case first := <-s.Notified:
		s.Notified <- first // kept for the caller
	}
	return s
}

// Unsubscribe is unsubscribe(): the consumer URL is unregistered unless
// register=false or interface=*, then "unsubscribe" is multicast.
func (r *Registry) Unsubscribe(s *Subscription) {
	if s.url.Interface() != dubbo.Any && s.url.Param("register", "true") != "false" {
		r.Unregister(s.url)
	}
	r.mu.Lock()
	delete(r.subscribed, s.url.String())
	delete(r.received, s.url.String())
	r.mu.Unlock()
	r.multicast("unsubscribe " + s.url.String())
}

// Heard is the set a subscription has heard, sorted.
func (r *Registry) Heard(s *Subscription) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k := range r.received[s.url.String()] {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// registeredURL is registered(): every matching subscription adds the URL
// to what it heard and is notified of the whole set.
func (r *Registry) registeredURL(u dubbo.URL) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, s := range r.subscribed {
		if !dubbo.Match(s.url, u) {
			continue
		}
		set := r.received[key]
		if set == nil {
			set = map[string]dubbo.URL{}
			r.received[key] = set
		}
		set[u.String()] = u
		notify(s, set)
	}
}

// unregisteredURL is unregistered(): the URL leaves each matching set; an
// empty set is notified as the URL with protocol empty.
func (r *Registry) unregisteredURL(u dubbo.URL) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, s := range r.subscribed {
		if !dubbo.Match(s.url, u) {
			continue
		}
		set := r.received[key]
		delete(set, u.String())
		if len(set) == 0 {
			notifyList(s, []string{"empty" + strings.TrimPrefix(u.String(), u.Protocol())})
			continue
		}
		notify(s, set)
	}
}

func notify(s *Subscription, set map[string]dubbo.URL) {
	var list []string
	for k := range set {
		list = append(list, k)
	}
	slices.Sort(list)
	notifyList(s, list)
}

func notifyList(s *Subscription, list []string) {
	select {
	case s.Notified <- list:
	default: // a test that stopped reading
	}
}
