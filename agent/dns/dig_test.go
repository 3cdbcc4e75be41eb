package dns

import (
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// dig (bind9-dnsutils) reads the door's answers as any resolver would:
// over UDP and TCP, SRV with the target's address in ADDITIONAL, and
// NXDOMAIN with the SOA. It skips without dig, and fails instead when
// NAMECAST_INTEROP=require (CI).
func TestDig(t *testing.T) {
	dig, err := exec.LookPath("dig")
	if err != nil {
		if os.Getenv("NAMECAST_INTEROP") == "require" {
			t.Fatalf("dig is required (NAMECAST_INTEROP=require; Debian: bind9-dnsutils): %v", err)
		}
		t.Skipf("dig not installed (Debian: bind9-dnsutils): %v", err)
	}
	_, addr := startServer(t, ServerConfig{Catalog: testCatalog()})
	host, port, _ := net.SplitHostPort(addr)
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(dig, append([]string{"@" + host, "-p", port, "+time=5", "+tries=1"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("dig %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	short := func(args ...string) []string {
		lines := strings.Fields(strings.TrimSpace(run(append(args, "+short")...)))
		slices.Sort(lines)
		return lines
	}
	if got := short("web.service.consul"); !slices.Equal(got, []string{"10.0.0.1", "10.0.0.2"}) {
		t.Errorf("dig web.service.consul +short: %q", got)
	}
	if got := short("+tcp", "primary.web.service.consul"); !slices.Equal(got, []string{"10.0.0.1"}) {
		t.Errorf("dig +tcp primary.web.service.consul +short: %q", got)
	}
	out := run("_mq._tcp.service.consul", "SRV")
	for _, want := range []string{"status: NOERROR", "flags: qr aa rd;", "ANSWER: 1", "ADDITIONAL: 2", // the A and the OPT
		"IN\tSRV\t1 1 10911 c0000207.addr.dc1.consul.", "c0000207.addr.dc1.consul. 0\tIN\tA\t192.0.2.7"} {
		if !strings.Contains(out, want) {
			t.Errorf("dig _mq._tcp.service.consul SRV: no %q in\n%s", want, out)
		}
	}
	out = run("nope.service.consul")
	for _, want := range []string{"status: NXDOMAIN", "AUTHORITY: 1", "consul.\t\t\t0\tIN\tSOA\tns.consul. hostmaster.consul."} {
		if !strings.Contains(out, want) {
			t.Errorf("dig nope.service.consul: no %q in\n%s", want, out)
		}
	}
}
