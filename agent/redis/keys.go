package redis

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/redis/resp"
	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/routes"
)

// The keyspace is the registry's Dubbo URLs, as RedisRegistry lays them
// out: the hash /dubbo/{interface}/{category} holds one field per URL
// (its full string) whose value is the URL's expiry in epoch
// milliseconds. A key exists while its hash has a field: a category with
// no URL is no key.

// root is Dubbo's default registry group, the first part of every key.
const root = "/dubbo/"

// parseKey reads /dubbo/{interface}/{category}; ok is false for any other
// key (which holds nothing here).
func parseKey(key string) (iface, category string, ok bool) {
	rest, ok := strings.CutPrefix(key, root)
	iface, category, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || !component(iface) || !component(category) {
		return "", "", false
	}
	return iface, category, true
}

func keyOf(iface, category string) string { return root + iface + "/" + category }

// component mirrors the agent's rule for interface and category names.
func component(s string) bool {
	if s == "" || len(s) > 255 || s == "*" || strings.ContainsAny(s, "/,") {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// fieldsOf are the URLs of a key's hash, sorted; none for a key outside
// the layout.
func (s *Server) fieldsOf(key string) []string {
	iface, category, ok := parseKey(key)
	if !ok {
		return nil
	}
	return s.table.URLs(iface, category)
}

// value is a field's value: the expiry its client wrote when this door
// holds it, else now + Expiry (the field lives while its holder does).
func (s *Server) value(key, url string, now time.Time) string {
	iface, category, _ := parseKey(key)
	if v, ok := s.heldValue(routes.URLKey(iface, category, url)); ok {
		return v
	}
	return strconv.FormatInt(now.Add(s.cfg.Expiry).UnixMilli(), 10)
}

// allKeys lists every key, sorted.
func (s *Server) allKeys() []string {
	var out []string
	for _, iface := range s.table.Services() {
		if !component(iface) {
			continue
		}
		for _, cat := range s.table.URLCategories(iface) {
			if component(cat) {
				out = append(out, keyOf(iface, cat))
			}
		}
	}
	return out
}

// fieldKey is the record key of field in key, read as Dubbo's URL
// (canonical: parameters sorted), and the URL; ok is false for a field that
// is no URL of that interface and category.
func fieldKey(key string, field []byte) (string, dubbo.URL, bool) {
	iface, category, ok := parseKey(key)
	if !ok {
		return "", dubbo.URL{}, false
	}
	u, err := dubbo.Parse(string(field))
	if err != nil || u.Interface() != iface || u.Category() != category {
		return "", dubbo.URL{}, false
	}
	return routes.URLKey(iface, category, u.String()), u, true
}

func cmdHGet(s *Server, c *conn, args [][]byte, b []byte) []byte {
	key := string(args[1])
	_, u, ok := fieldKey(key, args[2])
	if !ok || !slices.Contains(s.fieldsOf(key), u.String()) {
		return resp.NullBulk(b)
	}
	return resp.Bulk(b, s.value(key, u.String(), time.Now()))
}

func cmdHGetAll(s *Server, c *conn, args [][]byte, b []byte) []byte {
	key := string(args[1])
	fields := s.fieldsOf(key)
	now := time.Now()
	b = resp.Array(b, 2*len(fields))
	for _, f := range fields {
		b = resp.Bulk(b, f)
		b = resp.Bulk(b, s.value(key, f, now))
	}
	return b
}

func cmdHKeys(s *Server, c *conn, args [][]byte, b []byte) []byte {
	return resp.Bulks(b, s.fieldsOf(string(args[1])))
}

func cmdHLen(s *Server, c *conn, args [][]byte, b []byte) []byte {
	return resp.Int(b, int64(len(s.fieldsOf(string(args[1])))))
}

func cmdExists(s *Server, c *conn, args [][]byte, b []byte) []byte {
	n := 0
	for _, k := range args[1:] {
		if len(s.fieldsOf(string(k))) > 0 {
			n++
		}
	}
	return resp.Int(b, int64(n))
}

func cmdType(s *Server, c *conn, args [][]byte, b []byte) []byte {
	if len(s.fieldsOf(string(args[1]))) > 0 {
		return resp.Simple(b, "hash")
	}
	return resp.Simple(b, "none")
}

func cmdKeys(s *Server, c *conn, args [][]byte, b []byte) []byte {
	pat := string(args[1])
	var out []string
	for _, k := range s.allKeys() {
		if Match(pat, k) {
			out = append(out, k)
		}
	}
	return resp.Bulks(b, out)
}

// cmdScan is SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. The
// cursor is the 64-bit hash of the next key to return, keys visited in
// hash order, so, as Redis promises, a key present for the whole scan is
// returned, whatever else comes and goes meanwhile (a key may come
// twice). COUNT keys are looked at per call, before MATCH and TYPE
// filter them.
func cmdScan(s *Server, c *conn, args [][]byte, b []byte) []byte {
	cursor, ok := parseCursor(args[1])
	if !ok {
		return resp.Err(b, "ERR invalid cursor")
	}
	pat, count, typ := "", int64(10), ""
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			return resp.Err(b, "ERR syntax error")
		}
		switch strings.ToLower(string(args[i])) {
		case "match":
			pat = string(args[i+1])
		case "count":
			n, ok := parseInt(args[i+1])
			if !ok {
				return resp.Err(b, errNotInt)
			}
			if n < 1 {
				return resp.Err(b, "ERR syntax error")
			}
			count = n
		case "type":
			typ = string(args[i+1])
		default:
			return resp.Err(b, "ERR syntax error")
		}
	}
	type hk struct {
		h uint64
		k string
	}
	var all []hk
	for _, k := range s.allKeys() {
		all = append(all, hk{keyHash(k), k})
	}
	slices.SortFunc(all, func(x, y hk) int {
		if x.h != y.h {
			if x.h < y.h {
				return -1
			}
			return 1
		}
		return strings.Compare(x.k, y.k)
	})
	i, _ := slices.BinarySearchFunc(all, cursor, func(x hk, c uint64) int {
		switch {
		case x.h < c:
			return -1
		case x.h > c:
			return 1
		}
		return 0
	})
	var out []string
	next := uint64(0)
	for n := int64(0); i < len(all); i++ {
		if n == count {
			next = all[i].h
			break
		}
		n++
		if (pat == "" || Match(pat, all[i].k)) && (typ == "" || strings.EqualFold(typ, "hash")) {
			out = append(out, all[i].k)
		}
	}
	b = resp.Array(b, 2)
	b = resp.Bulk(b, strconv.FormatUint(next, 10))
	return resp.Bulks(b, out)
}

// keyHash places a key in SCAN's order; never 0, the cursor that starts
// and ends a scan.
func keyHash(k string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(k))
	return max(h.Sum64(), 1)
}

// parseCursor reads a SCAN cursor as Redis' strtoul does: an optional
// sign ("-1" is the largest cursor), decimal digits, nothing else; ""
// is 0.
func parseCursor(a []byte) (uint64, bool) {
	neg := false
	if len(a) > 0 && (a[0] == '-' || a[0] == '+') {
		neg, a = a[0] == '-', a[1:]
	}
	if len(a) == 0 {
		return 0, !neg
	}
	n, err := strconv.ParseUint(string(a), 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
