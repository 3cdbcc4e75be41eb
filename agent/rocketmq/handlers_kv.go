package rocketmq

import (
	"fmt"
	"strings"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/routes"
)

// KV config (100-102, 219) is cluster-scoped: every agent serves the same
// entries, and they survive restarts in the agents' data dirs, as Java's
// kvConfig.json does for one NameServer.

// kvNamespacesNS lists, as keys, every namespace ever written. Java's
// KVConfigManager keeps a namespace (with an empty table) after its last key
// is deleted, and answers it with an empty KVTable, not QUERY_NOT_FOUND; a
// 4.9 broker only clears order=true on its topics when REGISTER_BROKER
// carries that empty ORDER_TOPIC_CONFIG table.
const kvNamespacesNS = "~namecast.kvns"

// kvNamespace returns a namespace's entries and whether it exists, as Java's
// getKVListByNamespace tells a null table from an empty one.
func (s *Server) kvNamespace(ns string) (map[string]string, bool) {
	table := s.reg.Table()
	kv := table.KVs(ns)
	if len(kv) > 0 {
		return kv, true
	}
	_, known := table.KVs(kvNamespacesNS)[ns]
	return kv, known
}

// nsMarker records that namespace ns exists.
func nsMarker(ns string) routes.Record {
	return routes.Record{KV: &routes.KV{Namespace: kvNamespacesNS, Key: ns}}
}

// Bounds of one KV entry, as the HTTP API bounds a request body: every
// agent keeps every entry in memory and in its data dir, so what one
// client may store must be bounded (Java bounds them only by its 16 MiB
// frame). The agent also bounds all rules together (Config.RulesLimit).
const (
	maxKVKey   = 4 << 10
	maxKVValue = 1 << 20
)

// kvArgs checks the namespace and key every KV request carries. Namespaces
// starting with '~' are namecast's own (commands).
func kvArgs(req *remoting.Command, rep *reply, write bool) (ns, key string, ok bool) {
	if !requireExt(req, rep, "namespace", "key") {
		return "", "", false
	}
	ns, key = req.ExtFields["namespace"], req.ExtFields["key"]
	if write && strings.HasPrefix(ns, "~") {
		rep.fail(remoting.NoPermission, "namespace "+ns+" is reserved by namecast")
		return "", "", false
	}
	return ns, key, true
}

// putKVConfig is PUT_KV_CONFIG (100).
func (s *Server) putKVConfig(_ *conn, req *remoting.Command, rep *reply) {
	ns, key, ok := kvArgs(req, rep, true)
	if !ok || !requireExt(req, rep, "value") {
		return
	}
	// Only a stored entry needs a usable route key; reads and deletes of
	// what cannot be stored answer as Java does for an absent entry.
	if err := checkName("namespace", ns); err != nil {
		rep.fail(remoting.SystemError, err.Error())
		return
	}
	if key == "" {
		// Java would store it; a route key cannot end empty.
		rep.fail(remoting.SystemError, `key "" is not usable: namecast cannot store an empty KV key`)
		return
	}
	value := req.ExtFields["value"]
	if len(key) > maxKVKey || len(value) > maxKVValue {
		rep.fail(remoting.SystemError, fmt.Sprintf("KV entry too large: key %d bytes (at most %d), value %d bytes (at most %d)", len(key), maxKVKey, len(value), maxKVValue))
		return
	}
	s.applyRules(rep, []routes.Record{nsMarker(ns), {KV: &routes.KV{Namespace: ns, Key: key, Value: value}}}, nil)
}

// applyRules writes rules for a request, answering SYSTEM_ERROR with the
// reason when the agent refuses the write (the rules bound, a data dir
// that cannot save it): nothing changed then.
func (s *Server) applyRules(rep *reply, puts []routes.Record, deletes []string) {
	if _, err := s.reg.ApplyRules(puts, deletes); err != nil {
		rep.fail(remoting.SystemError, err.Error())
	}
}

// getKVConfig is GET_KV_CONFIG (101): the value, or QUERY_NOT_FOUND.
func (s *Server) getKVConfig(_ *conn, req *remoting.Command, rep *reply) {
	ns, key, ok := kvArgs(req, rep, false)
	if !ok {
		return
	}
	if v, found := s.reg.Table().KVs(ns)[key]; found {
		rep.SetExt("value", v)
		return
	}
	rep.fail(remoting.QueryNotFound, "No config item, Namespace: "+ns+" Key: "+key)
}

// deleteKVConfig is DELETE_KV_CONFIG (102): always SUCCESS.
func (s *Server) deleteKVConfig(_ *conn, req *remoting.Command, rep *reply) {
	ns, key, ok := kvArgs(req, rep, true)
	if !ok || !validName(ns) {
		return // nothing so named can be stored: deleting it is a no-op
	}
	// Namespaces written before markers existed get theirs now, so
	// deleting their last key leaves them empty rather than unknown.
	var puts []routes.Record
	if _, known := s.kvNamespace(ns); known {
		puts = append(puts, nsMarker(ns))
	}
	s.applyRules(rep, puts, []string{routes.KVKey(ns, key)})
}

// getKVList is GET_KVLIST_BY_NAMESPACE (219).
func (s *Server) getKVList(_ *conn, req *remoting.Command, rep *reply) {
	if !requireExt(req, rep, "namespace") {
		return
	}
	ns := req.ExtFields["namespace"]
	kv, known := s.kvNamespace(ns)
	if !known {
		rep.fail(remoting.QueryNotFound, "No config item, Namespace: "+ns)
		return
	}
	rep.buf = (&remoting.KVTable{Table: kv}).AppendJSON(rep.buf[:0])
	rep.Body = rep.buf
}
