package routes

import "testing"

// keyIs agrees with Key for every kind, and for near misses of a queue's.
func TestKeyIsAgreesWithKey(t *testing.T) {
	recs := append(everyKind(3), Record{}, Record{Queue: &Queue{Topic: "T", BrokerName: "b"}, KV: &KV{Namespace: "n", Key: "k"}},
		Record{Queue: &Queue{Topic: "T", BrokerName: "b"}}, Record{Queue: &Queue{Topic: "b/T", BrokerName: ""}},
		Record{Queue: &Queue{Topic: "T", BrokerName: "b/"}})
	keys := []string{"", "queue/b/T", "queue/b//T", "queue//b/T", "queue/b/T/", "queue/bT", "queue/b/", "queues/b/T", "queue/c/T", "queue/b/U"}
	for _, r := range recs {
		for _, k := range append(keys, r.Key()) {
			if got, want := r.keyIs(k), r.Key() == k && k != ""; got != want {
				t.Errorf("%+v keyIs(%q) = %v, Key() is %q", r, k, got, r.Key())
			}
		}
	}
}
