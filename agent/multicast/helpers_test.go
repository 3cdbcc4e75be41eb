package multicast

import (
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/routes"
)

// The host's addresses in these tests: loopback, and thisHost.
var (
	thisHost  = netip.MustParseAddr("198.18.0.1")
	otherHost = netip.MustParseAddr("198.18.0.2")
	// dubboPort is where Dubbo's processes send from: the group port.
	fromLocal = netip.AddrPortFrom(thisHost, 1234)
)

// sentDatagram is one datagram the testDoor sent: to the group (to invalid)
// or to one address.
type sentDatagram struct {
	to   netip.AddrPort
	text string
}

// fakeOut records what the testDoor sends instead of sending it.
type fakeOut struct {
	mu   sync.Mutex
	sent []sentDatagram
}

func (f *fakeOut) multicast(b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, sentDatagram{text: string(b)})
	return nil
}

func (f *fakeOut) unicast(b []byte, to netip.AddrPort) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, sentDatagram{to: to, text: string(b)})
	return nil
}

func (f *fakeOut) take() []sentDatagram {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sent
	f.sent = nil
	return s
}

// testDoor is a door on a fake host, its datagrams handed in by the test.
type testDoor struct {
	*Server
	fake *hosttest.Fake
	out  *fakeOut
	sink *metrics.InmemSink
}

func newTestDoor(t *testing.T, tune func(*Config)) *testDoor {
	t.Helper()
	fake := hosttest.New(routes.NewTable("a", 1))
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	m, _ := metrics.New(metrics.DefaultConfig("namecast"), sink)
	m.EnableHostname = false
	cfg := Config{Host: fake, Metrics: m, Probe: time.Hour,
		LocalAddrs: func() ([]netip.Addr, error) { return []netip.Addr{thisHost}, nil }}
	if tune != nil {
		tune(&cfg)
	}
	s := NewServer(cfg)
	d := &testDoor{Server: s, fake: fake, out: &fakeOut{}, sink: sink}
	s.out = d.out
	s.start()
	t.Cleanup(func() { s.Close() })
	return d
}

// send hands the testDoor a datagram from from.
func (d *testDoor) send(from netip.AddrPort, text string) { d.handle([]byte(text), from) }

// urls are the table's URLs of iface (every category).
func (d *testDoor) urls(iface string) []string { return d.table.URLs(iface, "") }

// counter is the value of namecast_multicast_<name> with the label, if
// any, summed over the sink's intervals.
func (d *testDoor) counter(name, label string) float64 {
	sum := 0.0
	for _, iv := range d.sink.Data() {
		for k, c := range iv.Counters {
			if strings.HasPrefix(k, "namecast.multicast."+name+";") || k == "namecast.multicast."+name {
				if label == "" || strings.Contains(k, "="+label) {
					sum += c.Sum
				}
			}
		}
	}
	return sum
}
