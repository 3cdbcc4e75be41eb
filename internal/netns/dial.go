package netns

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
)

// DialContext connects from inside the host, as a process there would: to
// its loopback (an agent's default HTTP address) or to other hosts in the
// lab. address must hold an IP literal, because name resolution would run on
// other threads, outside the namespace.
func (h *Host) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	if err := requireIPLiteral(address); err != nil {
		return nil, err
	}
	var c net.Conn
	err := inNetns(h.ns, func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// Listen opens a listener inside the host, for a test that plays a server on
// the lab network (a fake broker, say). address must hold an IP literal.
func (h *Host) Listen(network, address string) (net.Listener, error) {
	if err := requireIPLiteral(address); err != nil {
		return nil, err
	}
	var ln net.Listener
	err := inNetns(h.ns, func() error {
		var err error
		ln, err = net.Listen(network, address)
		return err
	})
	return ln, err
}

// HTTPClient returns a client whose connections start inside the host, so
// "http://127.0.0.1:7947/v1/members" reaches the agent on that host. It never
// uses a proxy.
func (h *Host) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:       nil,
		DialContext: h.DialContext,
	}}
}

func requireIPLiteral(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return fmt.Errorf("netns: %q is not an IP literal: names would be resolved outside the namespace", host)
	}
	return nil
}

// Do runs fn on a thread inside the host: the sockets fn opens belong to
// the host's network (a multicast socket, a raw UDP one), and stay there
// when fn returns.
func (h *Host) Do(fn func() error) error { return inNetns(h.ns, fn) }
