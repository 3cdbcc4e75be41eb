package routes

import (
	"bytes"
	"hash/fnv"
	"strings"
)

// Znode is a ZooKeeper node that is not a Dubbo URL (those are URL records):
// config-center entries, metadata, application instances, directories. The
// Stat fields every agent must show alike travel with it; the zxids do not,
// each agent keeps its own (see package agent/zookeeper).
//
// A persistent znode is a rule (RulesOrigin); an ephemeral one is a record
// of the agent holding its session, Owner naming that session.
type Znode struct {
	Path string `json:"p"`
	// Part splits one node into per-writer records merged on read, for
	// paths whose value is a set (Dubbo's service-name mapping): each agent
	// writes its own part, so concurrent writers never overwrite each other.
	Part string `json:"w,omitempty"`
	// Data keeps null (nil) apart from empty, as ZooKeeper does.
	Data    []byte `json:"d"`
	Version int32  `json:"v,omitempty"`
	Ctime   int64  `json:"c,omitempty"`
	Mtime   int64  `json:"m,omitempty"`
	Owner   int64  `json:"e,omitempty"`
	// Stamp is the table's Lamport time when the record was written
	// (Table.Stamp): of two agents' records for one path, the later wins.
	Stamp uint64 `json:"l,omitempty"`
	// Container marks a container node, reaped once its last child goes.
	Container bool `json:"k,omitempty"`
	// Replaces is the Stamp of the record this write was made over, as
	// its writer's agent knew it: a setData's base, or the newest other
	// agent's record at the path deleted through that agent before a
	// create. A record that outranks another without replacing it was
	// written without seeing it: the two conflicted, and the ZooKeeper
	// door expires the session whose write lost (agent/zookeeper).
	Replaces uint64 `json:"r,omitempty"`
}

// OriginOwner is the Owner of the ephemeral znodes an agent holds without a
// ZooKeeper session (registered over HTTP or Nacos), and the one the
// ZooKeeper door shows for another agent's URL records: a non-zero id
// derived from the agent's name, alike on every agent, with the top byte
// clear as ZooKeeper's session ids have.
func OriginOwner(origin string) int64 {
	h := fnv.New64a()
	h.Write([]byte(origin))
	return int64(h.Sum64()&0x00ffffffffffffff) | 1
}

// MaxZnodePath bounds a znode path (ZooKeeper has no limit but its 1 MiB
// packets; Dubbo's longest, URL leaves, are a few KB).
const MaxZnodePath = 32 << 10

// ZnodeKey is the key of a znode record; part is "" but for set-merged
// paths. NUL cannot occur in a ZooKeeper path, so it separates the part.
func ZnodeKey(path, part string) string {
	if part == "" {
		return znodePrefix + path
	}
	return znodePrefix + path + "\x00" + part
}

// ZnodePartsPrefix selects every part of one set-merged znode.
func ZnodePartsPrefix(path string) string { return znodePrefix + path + "\x00" }

// ZnodePrefix selects every znode record.
const ZnodePrefix = znodePrefix

// ZnodePathOfKey is the path of a znode record's key.
func ZnodePathOfKey(key string) (string, bool) {
	if !strings.HasPrefix(key, znodePrefix+"/") {
		return "", false
	}
	p := key[len(znodePrefix):]
	if i := strings.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	return p, true
}

// copyData copies b, keeping nil apart from empty.
func copyData(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func (z Znode) equal(o Znode) bool {
	return z.Path == o.Path && z.Part == o.Part && bytes.Equal(z.Data, o.Data) && (z.Data == nil) == (o.Data == nil) && z.Version == o.Version &&
		z.Ctime == o.Ctime && z.Mtime == o.Mtime && z.Owner == o.Owner && z.Stamp == o.Stamp && z.Container == o.Container && z.Replaces == o.Replaces
}

func (z Znode) valid() bool {
	return strings.HasPrefix(z.Path, "/") && len(z.Path) <= MaxZnodePath &&
		!strings.ContainsRune(z.Path, 0) && !strings.ContainsRune(z.Part, 0) && len(z.Part) <= 256
}

// Held is one origin's record under a key.
type Held struct {
	Origin string
	Rec    Record
}

// Holders returns every origin's live record under key: one key can be
// held by several agents (the same URL registered on two of them) and by
// the rules.
func (t *Table) Holders(key string) []Held {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []Held
	for o, st := range t.origins {
		if e, ok := st.live.get(key); ok {
			out = append(out, Held{Origin: o, Rec: e.clone()})
		}
	}
	return out
}

// RulesWithPrefix returns the live rules whose key starts with prefix.
func (t *Table) RulesWithPrefix(prefix string) []Held {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []Held
	for k, e := range t.origins[RulesOrigin].live.all() {
		if strings.HasPrefix(k, prefix) {
			out = append(out, Held{Origin: RulesOrigin, Rec: e.clone()})
		}
	}
	return out
}

// Keys lists the distinct live keys of every origin under prefix, in no
// order.
func (t *Table) Keys(prefix string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for _, st := range t.origins {
		for k := range st.live.all() {
			if strings.HasPrefix(k, prefix) && !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// OnChange registers fn to be told the key of every record that appears,
// changes or goes, from any origin. fn runs with the table locked: it must
// only note the key (and wake a goroutine), never call back into the table.
func (t *Table) OnChange(fn func(key string)) {
	t.mu.Lock()
	t.onChange = append(t.onChange, fn)
	t.mu.Unlock()
}

// changed tells the OnChange listeners about key. t.mu held.
func (t *Table) changed(key string) {
	for _, fn := range t.onChange {
		fn(key)
	}
}
