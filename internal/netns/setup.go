package netns

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
)

// nsPrefix starts every namespace a lab creates. The owner's pid follows it so
// a later test binary can tell leftovers of a dead one from a live lab.
const nsPrefix = "nct-"

var nsPattern = regexp.MustCompile(`^nct-(\d+)-([0-9a-f]{8})-`)

// live holds the ids of this process's labs that still exist, so the sweep can
// tell them from leftovers of an earlier process that had the same pid.
var live = struct {
	sync.Mutex
	ids map[string]bool
}{ids: map[string]bool{}}

var sweepOnce sync.Once

func registerLab() string {
	live.Lock()
	defer live.Unlock()
	for {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			panic(err) // crypto/rand does not fail on Linux
		}
		if id := hex.EncodeToString(b[:]); !live.ids[id] {
			live.ids[id] = true
			return id
		}
	}
}

func unregisterLab(id string) {
	live.Lock()
	delete(live.ids, id)
	live.Unlock()
}

func (l *Lab) nsName(role string) string {
	return fmt.Sprintf("%s%d-%s-%s", nsPrefix, os.Getpid(), l.id, role)
}

// subnetFor picks one of the 512 /24s of 198.18.0.0/15 from the lab id. Labs
// never share a namespace so overlap would be harmless; distinct subnets just
// keep logs from parallel labs unambiguous.
func subnetFor(id string) netip.Prefix {
	b, _ := hex.DecodeString(id)
	k := binary.BigEndian.Uint16(b) % 512
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18 + byte(k>>8), byte(k), 0}), 24)
}

func hostAddr(subnet netip.Prefix, i int) netip.Addr {
	a := subnet.Addr().As4()
	a[3] = byte(i + 1)
	return netip.AddrFrom4(a)
}

func (l *Lab) addNetns(name string) error {
	// Record before creating: if ip fails half-way, Close still tries.
	l.mu.Lock()
	l.created = append(l.created, name)
	l.mu.Unlock()
	if _, err := ip("netns", "add", name); err != nil {
		l.mu.Lock()
		l.created = l.created[:len(l.created)-1]
		l.mu.Unlock()
		return err
	}
	return setIPv6(name, l.ipv6)
}

func (l *Lab) addSwitch() error {
	if err := l.addNetns(l.sw); err != nil {
		return err
	}
	// Snooping off: the bridge must flood multicast to every port, as a dumb
	// LAN switch does, or mDNS depends on IGMP reports nobody sends here.
	if _, err := ip("-n", l.sw, "link", "add", "name", l.bridge, "type", "bridge", "mcast_snooping", "0"); err != nil {
		return err
	}
	_, err := ip("-n", l.sw, "link", "set", "dev", l.bridge, "up")
	return err
}

func (l *Lab) addHost(h *Host) error {
	if err := l.addNetns(h.ns); err != nil {
		return err
	}
	cidr := netip.PrefixFrom(h.addr, l.subnet.Bits()).String()
	steps := [][]string{
		{"-n", l.sw, "link", "add", "name", h.veth, "type", "veth", "peer", "name", "eth0", "netns", h.ns},
		{"-n", l.sw, "link", "set", "dev", h.veth, "master", l.bridge, "up"},
		{"-n", h.ns, "link", "set", "dev", "lo", "up"},
		{"-n", h.ns, "addr", "add", cidr, "dev", "eth0"},
		{"-n", h.ns, "link", "set", "dev", "eth0", "up"},
		// Only the connected /24 and this: no default route, so a stray
		// packet to anywhere else fails with ENETUNREACH inside the host.
		{"-n", h.ns, "route", "add", "224.0.0.0/4", "dev", "eth0"},
	}
	for _, args := range steps {
		if _, err := ip(args...); err != nil {
			return err
		}
	}
	return nil
}

// setIPv6 configures IPv6 in namespace ns before its interfaces exist. Off,
// interfaces never get link-local addresses or send router solicitations. On,
// duplicate address detection is skipped: there are no duplicates in a lab,
// and while it runs (about 2s) the link-local address cannot be used, so
// mDNS over IPv6 fails with EADDRNOTAVAIL right after New.
func setIPv6(ns string, on bool) error {
	key, val := "disable_ipv6", "1"
	if on {
		key, val = "accept_dad", "0"
	}
	return inNetns(ns, func() error {
		for _, conf := range []string{"all", "default"} {
			err := os.WriteFile("/proc/sys/net/ipv6/conf/"+conf+"/"+key, []byte(val), 0)
			if err != nil && !(errors.Is(err, fs.ErrNotExist) && !on) { // no IPv6 in this kernel: fine if unwanted
				return fmt.Errorf("setting %s=%s in %s: %w", key, val, ns, err)
			}
		}
		return nil
	})
}

// sweepStale removes namespaces left by labs whose test binary died without
// cleaning up (killed by -timeout, SIGKILL, a crash) and kills what still
// runs in them.
func sweepStale(t testing.TB) {
	names, err := netnsNames()
	if err != nil {
		return // New's own `ip netns add` reports the real problem
	}
	for _, ns := range names {
		m := nsPattern.FindStringSubmatch(ns)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		live.Lock()
		ours := pid == os.Getpid() && live.ids[m[2]]
		live.Unlock()
		if ours || (pid != os.Getpid() && processAlive(pid)) {
			continue
		}
		killNetnsPids(ns)
		if _, err := ip("netns", "del", ns); err == nil {
			t.Logf("netns: removed %s, left behind by dead process %d", ns, pid)
		}
	}
}

func killNetnsPids(ns string) {
	pids, _ := netnsPids(ns)
	for _, pid := range pids {
		_ = killPid(pid)
	}
}
