package consul

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/namecast/namecast/routes"
)

// Consul's KV on the cluster's rules: each key is a KV rule of namespace
// kvNamespace, written through the agent's rule store (bounded by
// --rules-limit, saved, gossiped) and served by every agent, last writer
// wins by the rules' hybrid clock (routes/rules.go). A key's
// ModifyIndex (and CreateIndex) is that clock's time of its last write,
// the same on every agent; a query's X-Consul-Index is the newest write
// under its key or prefix, deletes included.
//
// ?cas is checked and the write made as one step on this agent (kvMu),
// but two agents may each accept a write on the same index at once: the
// later by the clock wins on both. Consul's KV is linearizable; this is
// not, and sessions (locks) are refused (docs/protocols/consul.md §5).

const kvNamespace = "consul"

// maxKey bounds a key.
const maxKey = 1024

// kvEntry is api.KVPair.
type kvEntry struct {
	LockIndex   uint64
	Key         string
	Flags       uint64
	Value       []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// A value is kept as the rule's text when it is UTF-8 without flags (so
// every door shows it as written); otherwise (binary, or flags) as
// packed: NUL, then {"f":flags,"v":base64}.
type packed struct {
	Flags uint64 `json:"f,omitempty"`
	Value string `json:"v"`
}

func encodeValue(v []byte, flags uint64) string {
	if flags == 0 && utf8.Valid(v) && !strings.HasPrefix(string(v), "\x00") {
		return string(v)
	}
	b, _ := json.Marshal(packed{Flags: flags, Value: base64.StdEncoding.EncodeToString(v)})
	return "\x00" + string(b)
}

func decodeValue(s string) ([]byte, uint64) {
	if !strings.HasPrefix(s, "\x00") {
		return []byte(s), 0
	}
	var p packed
	if json.Unmarshal([]byte(s[1:]), &p) != nil {
		return []byte(s), 0
	}
	v, err := base64.StdEncoding.DecodeString(p.Value)
	if err != nil {
		return []byte(s), 0
	}
	return v, p.Flags
}

func kvKeyOf(r *http.Request) (string, error) {
	key := r.PathValue("key")
	if len(key) > maxKey {
		return "", errorf(http.StatusBadRequest, "key of %d bytes, longer than %d", len(key), maxKey)
	}
	for _, c := range key {
		if c < 0x20 || c == 0x7f {
			return "", errorf(http.StatusBadRequest, "key %q holds a control character", key)
		}
	}
	return key, nil
}

// entries are the keys under prefix (exactly key unless recurse) and the
// index of the prefix.
func (s *Server) entries(key string, recurse bool) ([]kvEntry, uint64) {
	rules, idx := s.table.RulesUnder(routes.KVKey(kvNamespace, key))
	var out []kvEntry
	for _, e := range rules {
		kv := e.Record.KV
		if kv == nil || kv.Namespace != kvNamespace || (!recurse && kv.Key != key) {
			continue
		}
		v, flags := decodeValue(kv.Value)
		if len(v) == 0 {
			v = nil
		}
		out = append(out, kvEntry{Key: kv.Key, Flags: flags, Value: v, CreateIndex: e.Time, ModifyIndex: e.Time})
	}
	return out, idx
}

// GET /v1/kv/{key}?recurse&keys&separator&raw.
func (s *Server) kvGet(r *http.Request) (any, uint64, error) {
	key, err := kvKeyOf(r)
	if err != nil {
		return nil, 0, err
	}
	q := r.URL.Query()
	_, recurse := q["recurse"]
	_, keysOnly := q["keys"]
	_, raw := q["raw"]
	es, idx := s.entries(key, recurse || keysOnly)
	if keysOnly {
		sep := q.Get("separator")
		out := []string{}
		for _, e := range es {
			k := e.Key
			if sep != "" {
				if i := strings.Index(k[len(key):], sep); i >= 0 {
					k = k[:len(key)+i+len(sep)]
				}
			}
			if len(out) == 0 || out[len(out)-1] != k {
				out = append(out, k)
			}
		}
		if len(out) == 0 {
			return nil, idx, errNotFound
		}
		return out, idx, nil
	}
	if len(es) == 0 {
		return nil, idx, errNotFound
	}
	if raw {
		return rawValue(es[0].Value), idx, nil
	}
	return es, idx, nil
}

// errNotFound is a KV miss: 404 with an empty body, as Consul answers.
var errNotFound = errorf(http.StatusNotFound, "")

// rawValue is ?raw's answer: the value itself.
type rawValue []byte

// PUT /v1/kv/{key}?flags&cas: true when written, false when ?cas did
// not match.
func (s *Server) kvPut(w http.ResponseWriter, r *http.Request) (any, error) {
	key, err := kvKeyOf(r)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, errorf(http.StatusBadRequest, "Missing key name")
	}
	q := r.URL.Query()
	if q.Has("acquire") || q.Has("release") {
		return nil, errorf(http.StatusBadRequest, "sessions (and KV locks) are not served by namecast's Consul door: its KV has no linearizable writes to lock with")
	}
	var flags uint64
	if raw := q.Get("flags"); raw != "" {
		if flags, err = strconv.ParseUint(raw, 10, 64); err != nil {
			return nil, errorf(http.StatusBadRequest, "Invalid flags: %v", err)
		}
	}
	cas, hasCAS, err := casParam(q.Get("cas"), q.Has("cas"))
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) || len(body) > maxKVValue {
		return nil, errorf(http.StatusRequestEntityTooLarge, "Request body(%d bytes) too large, max size: %d bytes. See %s.",
			max(r.ContentLength, int64(len(body))), maxKVValue, "https://developer.hashicorp.com/consul/docs/agent/config/config-files#kv_max_value_size")
	}
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "Request decode failed: %v", err)
	}
	s.kvMu.Lock()
	defer s.kvMu.Unlock()
	if hasCAS && !s.casMatches(key, cas) {
		return false, nil
	}
	rec := routes.Record{KV: &routes.KV{Namespace: kvNamespace, Key: key, Value: encodeValue(body, flags)}}
	if _, err := s.host.ApplyRules([]routes.Record{rec}, nil); err != nil {
		return nil, errorf(http.StatusInternalServerError, "%v", err)
	}
	s.metrics.IncrCounter([]string{"consul", "kv_writes"}, 1)
	return true, nil
}

// DELETE /v1/kv/{key}?recurse&cas.
func (s *Server) kvDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	key, err := kvKeyOf(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	_, recurse := q["recurse"]
	cas, hasCAS, err := casParam(q.Get("cas"), q.Has("cas"))
	if err != nil {
		return nil, err
	}
	if hasCAS && recurse {
		return nil, errorf(http.StatusBadRequest, "Conflicting flags: cas=&recurse") // Consul refuses both
	}
	if key == "" && !recurse {
		return nil, errorf(http.StatusBadRequest, "Missing key name")
	}
	s.kvMu.Lock()
	defer s.kvMu.Unlock()
	if hasCAS && !s.casMatches(key, cas) {
		return false, nil
	}
	es, _ := s.entries(key, recurse)
	var deletes []string
	for _, e := range es {
		deletes = append(deletes, routes.KVKey(kvNamespace, e.Key))
	}
	if len(deletes) > 0 {
		if _, err := s.host.ApplyRules(nil, deletes); err != nil {
			return nil, errorf(http.StatusInternalServerError, "%v", err)
		}
		s.metrics.IncrCounter([]string{"consul", "kv_writes"}, 1)
	}
	return true, nil
}

func casParam(raw string, has bool) (uint64, bool, error) {
	if !has {
		return 0, false, nil
	}
	v, err := strconv.ParseUint(raw, 10, 64)
	if err != nil {
		return 0, false, errorf(http.StatusBadRequest, "Invalid cas value: %v", err)
	}
	return v, true, nil
}

// casMatches is Consul's check-and-set: index 0 means "only if absent",
// any other the key's current ModifyIndex. kvMu is held.
func (s *Server) casMatches(key string, index uint64) bool {
	es, _ := s.entries(key, false)
	if index == 0 {
		return len(es) == 0
	}
	return len(es) == 1 && es[0].ModifyIndex == index
}
