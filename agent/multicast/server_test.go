package multicast

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

const (
	iface    = "org.apache.dubbo.demo.DemoService"
	provider = "dubbo://198.18.0.1:20880/org.apache.dubbo.demo.DemoService?anyhost=true&application=demo-provider&dynamic=true&interface=org.apache.dubbo.demo.DemoService&methods=sayHello&side=provider&version=1.0.0"
	consumer = "consumer://198.18.0.1/org.apache.dubbo.demo.DemoService?application=demo-consumer&category=providers,configurators,routers&interface=org.apache.dubbo.demo.DemoService&side=consumer&version=1.0.0"
)

// A register from a process of this host is the URL record every door
// shows (the key the ZooKeeper and Nacos doors write), held by this
// agent; its unregister withdraws it; an unregister of what the door
// never held changes nothing.
func TestRegisterFromThisHostIsTheURLRecord(t *testing.T) {
	d := newTestDoor(t, nil)
	d.send(fromLocal, "register "+provider+"\n")
	canon := dubbo.MustParse(provider).String()
	if got := d.urls(iface); !slices.Equal(got, []string{canon}) {
		t.Fatalf("table holds %q, want the provider", got)
	}
	key := routes.URLKey(iface, "providers", canon)
	if _, ok := d.table.LocalRecord(key); !ok {
		t.Fatalf("no local record at %s", key)
	}
	d.send(fromLocal, "unregister dubbo://198.18.0.1:20880/"+iface+"?version=1.0.0\n")
	if got := d.urls(iface); len(got) != 1 {
		t.Fatalf("an unregister of another URL withdrew %q", got)
	}
	d.send(netip.MustParseAddrPort("127.0.0.1:1234"), "unregister "+provider)
	if got := d.urls(iface); len(got) != 0 {
		t.Fatalf("after unregister the table holds %q", got)
	}
}

// Register and unregister from another host are left to its agent.
func TestAnotherHostsRegisterIsIgnored(t *testing.T) {
	d := newTestDoor(t, nil)
	d.send(netip.AddrPortFrom(otherHost, 1234), "register "+provider)
	if got := d.urls(iface); len(got) != 0 {
		t.Fatalf("another host's register was taken: %q", got)
	}
	if n := d.counter("ignored", "elsewhere"); n != 1 {
		t.Fatalf("ignored{elsewhere} = %v, want 1", n)
	}
}

// A subscribe is answered with every matching URL the cluster holds,
// whatever door wrote it: unicast to the sender's address and port;
// multicast when it asked unicast=false (or anything but true, as Java's
// Boolean.parseBoolean reads it), or sent from one of the host's own
// addresses (Dubbo's rule for a subscriber on the answerer's host). A URL of another version is not sent; another host's
// subscribe is not answered.
func TestSubscribeIsAnsweredForWhatTheClusterHolds(t *testing.T) {
	d := newTestDoor(t, nil)
	other := strings.Replace(provider, "version=1.0.0", "version=2.0.0", 1)
	viaHTTP := "dubbo://198.18.0.9:20880/" + iface + "?interface=" + iface + "&version=1.0.0"
	for _, raw := range []string{other, viaHTTP} {
		u := dubbo.MustParse(raw)
		if _, err := d.fake.Apply([]routes.Record{{URL: &routes.URL{Interface: iface, Category: "providers", URL: u.String()}}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	d.send(fromLocal, "register "+provider)
	testutil.Eventually(t, 20*time.Second, func() error { // the announcements of the two put in
		if n := d.counter("announced", ""); n < 2 {
			return fmt.Errorf("%v announced", n)
		}
		return nil
	})
	d.out.take()
	want := []string{"register " + dubbo.MustParse(provider).String() + "\n", "register " + dubbo.MustParse(viaHTTP).String() + "\n"}
	slices.Sort(want)
	lo := netip.MustParseAddrPort("127.0.0.1:1234")
	for _, c := range []struct {
		name, sub string
		from, to  netip.AddrPort
	}{
		{"unicast", consumer, lo, lo},
		{"unicast=false", consumer + "&unicast=false", lo, netip.AddrPort{}},
		{"unicast=no", consumer + "&unicast=no", lo, netip.AddrPort{}},
		{"from a host address", consumer, fromLocal, netip.AddrPort{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d.send(c.from, "subscribe "+c.sub+"\n")
			got := d.out.take()
			var texts []string
			for _, s := range got {
				if s.to != c.to {
					t.Errorf("%q sent to %v, want %v", s.text, s.to, c.to)
				}
				texts = append(texts, s.text)
			}
			slices.Sort(texts)
			if !slices.Equal(texts, want) {
				t.Fatalf("answers %q, want %q", texts, want)
			}
		})
	}
	d.send(netip.AddrPortFrom(otherHost, 1234), "subscribe "+consumer)
	if got := d.out.take(); len(got) != 0 {
		t.Fatalf("another host's subscribe was answered: %v", got)
	}
}

// A URL appearing or going anywhere else is announced to the host's group;
// what a process of the host registered itself is not (it multicast it).
func TestChangesFromElsewhereAreAnnounced(t *testing.T) {
	d := newTestDoor(t, nil)
	u := dubbo.MustParse("dubbo://198.18.0.9:20880/" + iface + "?interface=" + iface)
	rec := routes.Record{URL: &routes.URL{Interface: iface, Category: "providers", URL: u.String()}}
	await := func(want string) {
		t.Helper()
		testutil.Eventually(t, 20*time.Second, func() error {
			got := d.out.take()
			if len(got) != 1 || got[0].text != want || got[0].to.IsValid() {
				return fmt.Errorf("sent %v, want one multicast %q", got, want)
			}
			return nil
		})
	}
	d.fake.Apply([]routes.Record{rec}, nil)
	await("register " + u.String() + "\n")
	d.fake.Apply(nil, []string{rec.Key()})
	await("unregister " + u.String() + "\n")

	d.send(fromLocal, "register "+provider)
	d.fake.Apply([]routes.Record{rec}, nil) // a marker after it
	await("register " + u.String() + "\n")
}

// Datagrams that are not Dubbo's are counted by kind and change nothing.
func TestBadDatagramsAreCountedAndChangeNothing(t *testing.T) {
	d := newTestDoor(t, nil)
	for _, c := range []struct{ text, why string }{
		{"hello " + provider, "verb"},
		{"register ://x", "url"},
		{"register dubbo://198.18.0.1:1/a.B?m=" + strings.Repeat("x", 3000), "cut"},
		{"register dubbo://198.18.0.1:1/a/b?interface=a/b", "record"},
		{"register dubbo:///" + iface, "record"},
	} {
		before := d.counter("bad", c.why)
		d.send(fromLocal, c.text)
		if n := d.counter("bad", c.why) - before; n != 1 {
			t.Errorf("%.40q: bad{why=%s} grew by %v, want 1", c.text, c.why, n)
		}
	}
	if got := d.table.Services(); len(got) != 0 {
		t.Fatalf("bad datagrams registered %q", got)
	}
}

// One address holds at most MaxPerSender registrations; another address
// is not held back by it, and a re-register of one held is no new one.
func TestRegistrationsPerSenderAreBounded(t *testing.T) {
	d := newTestDoor(t, func(c *Config) { c.MaxPerSender = 2 })
	reg := func(from netip.AddrPort, port int) {
		d.send(from, fmt.Sprintf("register dubbo://198.18.0.1:%d/%s", port, iface))
	}
	reg(fromLocal, 1)
	reg(fromLocal, 2)
	reg(fromLocal, 2)
	reg(fromLocal, 3)
	if n := len(d.urls(iface)); n != 2 {
		t.Fatalf("%d registrations held for one sender, want 2", n)
	}
	if n := d.counter("refused", "sender"); n != 1 {
		t.Fatalf("refused{sender} = %v, want 1", n)
	}
	reg(netip.MustParseAddrPort("127.0.0.1:1234"), 3)
	if n := len(d.urls(iface)); n != 3 {
		t.Fatalf("another sender's register was refused: %d held", n)
	}
}

// A register past the agent's record budget is refused and counted; it
// changes nothing.
func TestRegisterPastTheBudgetIsRefused(t *testing.T) {
	d := newTestDoor(t, nil)
	d.fake.Budget = routes.Budget{Records: 1}
	d.send(fromLocal, "register dubbo://198.18.0.1:1/"+iface)
	d.send(fromLocal, "register dubbo://198.18.0.1:2/"+iface)
	if n := len(d.urls(iface)); n != 1 {
		t.Fatalf("%d held, want 1 (the budget)", n)
	}
	if n := d.counter("refused", "budget"); n != 1 {
		t.Fatalf("refused{budget} = %v, want 1", n)
	}
	if n := len(d.held); n != 1 {
		t.Fatalf("the door holds %d, want 1", n)
	}
}

// A provider whose port stops accepting is withdrawn, and its withdrawal
// announced; a consumer URL (no port to check) stays.
func TestDeadProviderIsWithdrawn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := newTestDoor(t, func(c *Config) { c.Probe = 50 * time.Millisecond })
	port := ln.Addr().(*net.TCPAddr).Port
	prov := "dubbo://127.0.0.1:" + strconv.Itoa(port) + "/" + iface + "?interface=" + iface
	cons := "consumer://127.0.0.1/" + iface + "?category=consumers&interface=" + iface
	d.send(fromLocal, "register "+prov)
	d.send(fromLocal, "register "+cons)
	d.probeAll() // a live provider stays
	if got := d.urls(iface); len(got) != 2 {
		t.Fatalf("after a check of a live provider the table holds %q", got)
	}
	ln.Close()
	testutil.Eventually(t, 10*time.Second, func() error {
		if got := d.urls(iface); len(got) != 1 || !strings.HasPrefix(got[0], "consumer://") {
			return fmt.Errorf("table holds %q, want the consumer only", got)
		}
		return nil
	})
	testutil.Eventually(t, 20*time.Second, func() error {
		for _, s := range d.out.take() {
			if s.text == "unregister "+dubbo.MustParse(prov).String()+"\n" {
				return nil
			}
		}
		return errors.New("the withdrawal was not announced")
	})
}

// A URL too long for a Dubbo receiver's 2048 bytes is never sent.
func TestTooLongURLIsNotSent(t *testing.T) {
	d := newTestDoor(t, nil)
	long := dubbo.MustParse("dubbo://198.18.0.9:1/" + iface + "?methods=" + strings.Repeat("m", 2100))
	d.fake.Apply([]routes.Record{{URL: &routes.URL{Interface: iface, Category: "providers", URL: long.String()}}}, nil)
	testutil.Eventually(t, 20*time.Second, func() error {
		if d.counter("too_long", "") != 1 {
			return errors.New("not counted")
		}
		return nil
	})
	d.send(netip.MustParseAddrPort("127.0.0.1:1234"), "subscribe "+consumer)
	if got := d.out.take(); len(got) != 0 {
		t.Fatalf("sent %d datagrams", len(got))
	}
}

// A registration held before a restart is the door's again: its
// unregister withdraws it, and the liveness check covers it.
func TestRestoredRegistrationIsHeldAgain(t *testing.T) {
	u := dubbo.MustParse(provider)
	rec := routes.Record{URL: &routes.URL{Interface: iface, Category: "providers", URL: u.String()}}
	d := newTestDoor(t, func(c *Config) {
		f := c.Host.(*hosttest.Fake)
		f.Apply([]routes.Record{rec}, nil) // republished at start, before the doors
		f.Restore(lease.Lease{Door: door, ID: rec.Key(), Keys: []string{rec.Key()}, State: []byte(`{"from":"198.18.0.1"}`)})
	})
	if !d.holds(rec.Key()) || d.bySender[thisHost] != 1 {
		t.Fatalf("the restored registration is not held (by sender: %v)", d.bySender)
	}
	d.send(fromLocal, "unregister "+provider)
	if got := d.urls(iface); len(got) != 0 {
		t.Fatalf("after unregister the table holds %q", got)
	}
	if _, ok := d.fake.Lease(door, rec.Key()); ok {
		t.Fatal("the lease outlived the unregister")
	}
}

// A register the data dir cannot save changes nothing and is counted; so
// does an unregister, whose registration stays.
func TestUnsavedChangesNothing(t *testing.T) {
	d := newTestDoor(t, nil)
	d.send(fromLocal, "register "+provider)
	hosttest.SetErr(&d.fake.LeaseErr, errors.New("disk full"))
	d.send(fromLocal, "register dubbo://198.18.0.1:2/"+iface)
	d.send(fromLocal, "unregister "+provider)
	if got := d.urls(iface); !slices.Equal(got, []string{dubbo.MustParse(provider).String()}) {
		t.Fatalf("with a full disk the table holds %q, want the first provider only", got)
	}
	if n := d.counter("refused", "unsaved"); n != 2 {
		t.Fatalf("refused{unsaved} = %v, want 2", n)
	}
	hosttest.SetErr(&d.fake.LeaseErr, nil)
	d.send(fromLocal, "unregister "+provider)
	if got := d.urls(iface); len(got) != 0 {
		t.Fatalf("after the disk is back, unregister left %q", got)
	}
}
