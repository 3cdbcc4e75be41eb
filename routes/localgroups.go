package routes

import "strings"

// localGroups are the table's own live records by group: a key up to and
// including its second '/' ("queue/broker-a/", "broker/broker-a/",
// "mapping/broker-a/"), the prefixes LocalRecords is asked for. A broker's
// registration replaces its queue records wholesale, so each one read the
// broker's records through LocalRecords, which scanned every record of the
// agent: an agent carrying B brokers of T topics scanned B·T records per
// registration, and B² · T to register them all.
//
// Only the local origin has them (a sidecar carries a few brokers; its
// replicas of everyone else's records are never read by prefix): each
// group is a liveSet of the same entries, ~12 bytes a local record.
type localGroups map[string]*liveSet

// groupOf is key up to and including its second '/', "" if it has none.
// A prefix that is its own group selects exactly that group's keys: a key
// with that prefix has its second '/' where the prefix ends.
func groupOf(key string) string {
	i := strings.IndexByte(key, '/')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(key[i+1:], '/')
	if j < 0 {
		return ""
	}
	return key[:i+1+j+1]
}

// put adds e to its group, or replaces the entry of the same key there.
func (g localGroups) put(e *entry) {
	name := groupOf(e.key)
	if name == "" {
		return
	}
	s, ok := g[name]
	if !ok {
		s = &liveSet{}
		g[name] = s
	}
	s.put(e)
}

// del removes key from its group, and the group once empty.
func (g localGroups) del(key string) {
	name := groupOf(key)
	s, ok := g[name]
	if name == "" || !ok {
		return
	}
	s.del(key)
	if s.len() == 0 {
		delete(g, name)
	}
}
