package lease

import (
	"slices"
	"testing"

	"github.com/namecast/namecast/routes"
)

// A lease covers its keys exactly and what is under its prefixes, never a
// sibling whose name extends one of them.
func TestCovers(t *testing.T) {
	l := Lease{Keys: []string{routes.BrokerKey("b", 1), routes.ZnodeKey("/a/b", "")},
		Prefixes: []string{routes.QueuePrefix("b"), "url/old/key"}}
	for key, want := range map[string]bool{
		routes.BrokerKey("b", 1):         true,
		routes.BrokerKey("b", 10):        false,
		routes.ZnodeKey("/a/b", ""):      true,
		routes.ZnodeKey("/a/bc", ""):     false,
		routes.ZnodeKey("/a/b/c", ""):    false, // a key is not a prefix, even at a separator
		routes.ZnodeKey("/a/b", "x"):     false,
		routes.QueueKey("b", "T"):        true,
		routes.QueueKey("bc", "T"):       false,
		"url/old/key":                    true, // saved before Keys existed: a key
		"url/old/key2":                   false,
		routes.QueuePrefix("b") + "T/xx": true,
	} {
		if got := l.Covers(key); got != want {
			t.Errorf("Covers(%q) = %v, want %v", key, got, want)
		}
	}
}

type fakeLocal map[string]routes.Record

func (f fakeLocal) LocalRecord(key string) (routes.Record, bool) { r, ok := f[key]; return r, ok }

func (f fakeLocal) LocalRecords(prefix string) []routes.Record {
	var out []routes.Record
	for k, r := range f {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b routes.Record) int {
		if a.Key() < b.Key() {
			return -1
		}
		return 1
	})
	return out
}

func TestRecords(t *testing.T) {
	local := fakeLocal{}
	for _, r := range []routes.Record{
		{Broker: &routes.Broker{Name: "b", ID: 1}},
		{Broker: &routes.Broker{Name: "b", ID: 10}},
		{Queue: &routes.Queue{BrokerName: "b", Topic: "T1"}},
		{Queue: &routes.Queue{BrokerName: "b", Topic: "T2"}},
		{Queue: &routes.Queue{BrokerName: "bc", Topic: "T1"}},
		{Znode: &routes.Znode{Path: "/a/b"}},
		{Znode: &routes.Znode{Path: "/a/bc"}},
	} {
		local[r.Key()] = r
	}
	l := Lease{Keys: []string{routes.BrokerKey("b", 1), routes.ZnodeKey("/a/b", ""), routes.ZnodeKey("/gone", "")},
		Prefixes: []string{routes.QueuePrefix("b"), routes.BrokerKey("b", 1)}}
	var got []string
	for _, r := range l.Records(local) {
		got = append(got, r.Key())
	}
	want := []string{routes.BrokerKey("b", 1), routes.ZnodeKey("/a/b", ""), routes.QueueKey("b", "T1"), routes.QueueKey("b", "T2")}
	if !slices.Equal(got, want) {
		t.Fatalf("Records = %q, want %q", got, want)
	}
}

func TestSameButDeadline(t *testing.T) {
	a := Lease{Door: "d", ID: "1", Keys: []string{"k"}, State: []byte(`{}`)}
	b := a
	b.Deadline = b.Deadline.Add(1)
	if !a.SameButDeadline(b) {
		t.Fatal("a deadline change made the lease different")
	}
	b.Keys = []string{"k", "k2"}
	if a.SameButDeadline(b) {
		t.Fatal("a change of keys went unnoticed")
	}
}
