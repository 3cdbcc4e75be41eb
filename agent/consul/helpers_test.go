package consul

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/namecast/namecast/agent/host/hosttest"
	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/routes"
)

// fakeAgent is the agent's members.
type fakeAgent struct {
	members []gossip.Member
	leaving bool
}

func (f *fakeAgent) Members() []gossip.Member { return f.members }
func (f *fakeAgent) Leaving() bool            { return f.leaving }

// door is one door over a bare table, served without a listener.
type door struct {
	t     *testing.T
	s     *Server
	host  *hosttest.Fake
	agent *fakeAgent
}

func newDoor(t *testing.T) *door {
	t.Helper()
	tab := routes.NewTable("agent-a", 1)
	h := hosttest.New(tab)
	ag := &fakeAgent{members: []gossip.Member{
		{Name: "agent-a", Addr: "10.1.0.1:7946", Status: gossip.StatusAlive},
		{Name: "agent-b", Addr: "10.1.0.2:7946", Status: gossip.StatusAlive},
	}}
	s, err := New(Config{Host: h, Agent: ag, Node: "agent-a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &door{t: t, s: s, host: h, agent: ag}
}

// call answers one request: its status, headers and body.
func (d *door) call(method, path string, body any) (int, http.Header, []byte) {
	d.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			d.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	rec := httptest.NewRecorder()
	d.s.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Header(), rec.Body.Bytes()
}

// ok calls and fails the test unless the answer is 200; it decodes the
// body into out when out is not nil.
func (d *door) ok(method, path string, body, out any) http.Header {
	d.t.Helper()
	code, h, b := d.call(method, path, body)
	if code != http.StatusOK {
		d.t.Fatalf("%s %s: %d %s", method, path, code, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			d.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return h
}
