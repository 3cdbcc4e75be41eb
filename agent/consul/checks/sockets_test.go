package checks

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/consul/catalog"
	"github.com/namecast/namecast/internal/testutil"
)

// The default dialer reaches real sockets: a listening TCP port and an
// HTTP server are passing, a closed port critical.
func TestChecksOnRealSockets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	open, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("up")) }))
	defer web.Close()
	rec := &recorder{}
	r := New(rec.config())
	defer r.Close()
	r.Set(catalog.CheckDef{ID: "open", TCP: open.Addr().String(), Interval: time.Minute, Timeout: 5 * time.Second})
	r.Set(catalog.CheckDef{ID: "closed", TCP: closed, Interval: time.Minute, Timeout: 5 * time.Second, Status: catalog.Passing})
	r.Set(catalog.CheckDef{ID: "web", HTTP: web.URL, Interval: time.Minute, Timeout: 5 * time.Second})
	testutil.Eventually(t, 10*time.Second, func() error {
		got, _ := rec.seen()
		slices.Sort(got)
		if !slices.Equal(got, []string{"closed critical", "open passing", "web passing"}) {
			return errorf("reports %q", got)
		}
		return nil
	})
}
