package zookeeper

import (
	"net/url"
	"strings"

	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/routes"
)

// dubboRoot is the registry root whose URL leaves are URL records. Other
// roots (a registry group other than "dubbo") are generic znodes.
const dubboRoot = "/dubbo"

// mappingPrefix holds Dubbo's service-name mapping, whose values are
// comma-separated sets merged across writers (spec §5.3).
const mappingPrefix = "/dubbo/mapping/"

func isSetPath(p string) bool {
	return strings.HasPrefix(p, mappingPrefix) && !strings.Contains(p[len(mappingPrefix):], "/")
}

// urlPath is the znode path of a URL record, as Dubbo's ZookeeperRegistry
// builds it: /dubbo/{URL.encode(interface)}/{category}/{URL.encode(url)}.
func urlPath(iface, category, u string) string {
	return dubboRoot + "/" + javaEncode(iface) + "/" + category + "/" + javaEncode(u)
}

// urlOfPath reads a Dubbo URL leaf path. ok is false for any other path:
// not four segments under /dubbo, a name that is not a URL, or one whose
// interface or category disagrees with the directories it sits in.
func urlOfPath(p string) (rec routes.URL, canon string, ok bool) {
	if !strings.HasPrefix(p, dubboRoot+"/") {
		return routes.URL{}, "", false
	}
	segs := strings.Split(p[len(dubboRoot)+1:], "/")
	if len(segs) != 3 {
		return routes.URL{}, "", false
	}
	iface, err := url.QueryUnescape(segs[0])
	if err != nil {
		return routes.URL{}, "", false
	}
	u, err := dubbo.Parse(segs[2])
	if err != nil || u.Interface() != iface || u.Category() != segs[1] || !component(iface) || !component(segs[1]) {
		return routes.URL{}, "", false
	}
	rec = routes.URL{Interface: iface, Category: segs[1], URL: u.String()}
	return rec, urlPath(iface, segs[1], rec.URL), true
}

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

// canonical is the tree path of a client path: URL leaves are named by the
// canonical URL, so a client's spelling (parameter order, escaping) maps to
// the one node.
func canonical(p string) string {
	if _, c, ok := urlOfPath(p); ok {
		return c
	}
	return p
}

// canon is the tree path of client path p, without parsing when p names
// a node of the tree or the path a node is listed under (a client reads
// what it listed). Parsing a provider URL costs more than the rest of a
// read. s.mu held.
func (s *Server) canon(p string) string {
	if s.tree.nodes[p] != nil {
		return p
	}
	if tp, ok := s.tree.alias[p]; ok {
		return tp
	}
	return canonical(p)
}

// pathOfKey is the znode path of a table key, ok false for keys that are
// not znodes (brokers, queues, KV).
func pathOfKey(key string) (string, bool) {
	if p, ok := routes.ZnodePathOfKey(key); ok {
		return p, true
	}
	if iface, category, url, ok := routes.ParseURLKey(key); ok {
		return urlPath(iface, category, url), true
	}
	return "", false
}

// javaEncode is java.net.URLEncoder.encode(s, "UTF-8"), which Dubbo uses
// for path segments: letters, digits and ".-*_" stay, space is '+', every
// other byte is %XX in upper case.
func javaEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) * 2)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// parentOf is the parent path of p ("/" for top-level nodes).
func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func baseOf(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// validPath applies ZooKeeper's PathUtils.validatePath.
func validPath(p string) bool {
	if p == "" || p[0] != '/' || len(p) > routes.MaxZnodePath {
		return false
	}
	if p == "/" {
		return true
	}
	if p[len(p)-1] == '/' {
		return false
	}
	for rest := p[1:]; ; {
		seg, more, found := strings.Cut(rest, "/")
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		if !found {
			break
		}
		rest = more
	}
	for _, c := range p {
		if c == 0 || (c > 0 && c <= 0x1f) || (c >= 0x7f && c <= 0x9f) ||
			(c >= 0xd800 && c <= 0xf8ff) || (c >= 0xfff0 && c <= 0xffff) {
			return false
		}
	}
	return true
}

// configPath is ZooKeeper's /zookeeper/config: read-only (its ACL), kept
// empty here (tree.init).
const configPath = "/zookeeper/config"

// special paths are the nodes every ZooKeeper server has; they cannot be
// deleted (DataTree.isSpecialPath).
func special(p string) bool {
	return p == "/" || p == "/zookeeper" || p == "/zookeeper/quota" || p == configPath
}
