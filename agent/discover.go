package agent

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/mdns"

	"github.com/namecast/namecast/gossip"
)

// discoverName is what --discover accepts: it becomes a DNS-SD service
// label, so it keeps to DNS label characters.
var discoverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,39}$`)

// mdnsService is the DNS-SD service agents of one discovery name share.
func mdnsService(name string) string { return "_namecast-" + name + "._udp" }

// Browsing starts quick, so a cold cluster forms in seconds, and slows to
// mdnsMaxPoll: memberlist and the reconnect loop keep a formed cluster
// together; browsing only has to notice hosts that appear later.
const (
	mdnsFirstPoll = 500 * time.Millisecond
	mdnsMaxPoll   = 30 * time.Second
	mdnsQuery     = time.Second
)

// discovery advertises this agent over mDNS and browses for others,
// joining any that are not members yet (as the Serf agent does).
type discovery struct {
	name      string // --discover; "": no discovery
	ifaceName string // --discover-interface
	node      string
	gossip    *gossip.Gossip
	log       *slog.Logger
	joined    func() // called when a browse joined a peer
	server    *mdns.Server
}

// start advertises and starts browsing on a goroutine of wg that ends with
// ctx.
func (d *discovery) start(ctx context.Context, wg *sync.WaitGroup) error {
	if d.name == "" {
		return nil
	}
	host, portStr, err := net.SplitHostPort(d.gossip.LocalAddr())
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	port, _ := strconv.Atoi(portStr)
	iface, err := d.iface(ip)
	if err != nil {
		return err
	}
	svc, err := mdns.NewMDNSService(d.node, mdnsService(d.name), "", dnsLabel(d.node)+".local.",
		port, []net.IP{ip}, []string{"namecast cluster " + d.name})
	if err != nil {
		return fmt.Errorf("--discover: %w", err)
	}
	d.server, err = mdns.NewServer(&mdns.Config{Zone: svc, Iface: iface, Logger: log.New(io.Discard, "", 0)})
	if err != nil {
		return fmt.Errorf("--discover: advertising over mDNS on %s: %w", ifaceName(iface), err)
	}
	d.log.Info("discovering peers over mDNS", "service", mdnsService(d.name), "interface", ifaceName(iface), "advertise", d.gossip.LocalAddr())
	wg.Go(func() { d.loop(ctx, iface) })
	return nil
}

// stop stops advertising.
func (d *discovery) stop() {
	if d.server != nil {
		_ = d.server.Shutdown()
	}
}

func (d *discovery) loop(ctx context.Context, iface *net.Interface) {
	wait := mdnsFirstPoll
	for {
		if n := d.browseOnce(iface); n > 0 {
			d.joined()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, mdnsMaxPoll)
	}
}

// browseOnce queries once and joins every advertised agent that is not an
// alive member; it returns how many it joined.
func (d *discovery) browseOnce(iface *net.Interface) int {
	entries := make(chan *mdns.ServiceEntry, 64)
	go func() {
		_ = mdns.Query(&mdns.QueryParam{Service: mdnsService(d.name), Interface: iface, Timeout: mdnsQuery,
			Entries: entries, DisableIPv6: true, Logger: log.New(io.Discard, "", 0)})
		close(entries)
	}()
	known := map[string]bool{d.gossip.LocalAddr(): true}
	for _, m := range d.gossip.Members() {
		if m.Status == gossip.StatusAlive {
			known[m.Addr] = true
		}
	}
	var join []string
	for e := range entries {
		if e.AddrV4 == nil {
			continue
		}
		addr := net.JoinHostPort(e.AddrV4.String(), strconv.Itoa(e.Port))
		if !known[addr] {
			known[addr] = true
			join = append(join, addr)
		}
	}
	if len(join) == 0 {
		return 0
	}
	n, err := d.gossip.Join(join)
	if n > 0 {
		d.log.Info("joined peers found over mDNS", "joined", n, "addrs", join)
	} else {
		d.log.Warn("could not join peers found over mDNS (another --cluster or --encrypt key?)", "addrs", join, "err", err)
	}
	return n
}

// iface is --discover-interface, else the interface holding the gossip
// address ip (multicast must go where peers can reach us).
func (d *discovery) iface(ip net.IP) (*net.Interface, error) {
	if d.ifaceName != "" {
		iface, err := net.InterfaceByName(d.ifaceName)
		if err != nil {
			return nil, fmt.Errorf("--discover-interface %q: %w", d.ifaceName, err)
		}
		return iface, nil
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for i := range ifaces {
		addrs, _ := ifaces[i].Addrs()
		for _, ad := range addrs {
			if n, ok := ad.(*net.IPNet); ok && n.IP.Equal(ip) {
				return &ifaces[i], nil
			}
		}
	}
	return nil, nil // the system's default multicast interface
}

func ifaceName(i *net.Interface) string {
	if i == nil {
		return "default"
	}
	return i.Name
}

// dnsLabel keeps a node name usable as an mDNS host label.
func dnsLabel(s string) string {
	out := []byte(s)
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			out[i] = '-'
		}
	}
	if len(out) > 63 {
		out = out[:63]
	}
	return string(out)
}

// advertiseIP picks the address to advertise when gossip binds to all
// interfaces. An address on an interface with a carrier comes first: one
// without (an idle bridge such as Docker's docker0, an unplugged NIC) is up
// but reaches no peer, and its private address must not win over the LAN's
// public one. Then memberlist's preference: a private (RFC 1918) address
// over another global one, as a host may have both and the LAN is usually
// private. Interface order breaks ties.
func advertiseIP() (string, error) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	best, bestRank := "", -1
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := iface.Addrs()
		for _, ad := range addrs {
			n, ok := ad.(*net.IPNet)
			if !ok || n.IP.To4() == nil || !n.IP.IsGlobalUnicast() {
				continue
			}
			rank := 0
			if iface.Flags&net.FlagRunning != 0 {
				rank += 2
			}
			if n.IP.IsPrivate() {
				rank++
			}
			if rank > bestRank {
				best, bestRank = n.IP.String(), rank
			}
		}
	}
	if best == "" {
		return "", fmt.Errorf("no up, non-loopback IPv4 address to advertise: set --advertise HOST:PORT")
	}
	return best, nil
}
