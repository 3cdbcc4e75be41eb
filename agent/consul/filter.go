package consul

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// ?filter: the part of Consul's filter language (go-bexpr,
// https://developer.hashicorp.com/consul/api-docs/features/filtering)
// clients use: a selector (Service.Tags, ServiceMeta.version,
// Node.Node, Checks.Status ...) compared with ==, !=, in, not in,
// contains, not contains, matches, not matches, is empty, is not empty;
// joined by and, or, not and parentheses. A filter beyond it is refused
// 400, never ignored.

// maxFilter bounds a filter expression.
const maxFilter = 4096

// fields are what a filter's selectors name: a string, a list of
// strings, or a map (Meta) whose keys are the next selector part.
type fields map[string]any

type filter struct{ root expr }

type expr interface{ eval(fields) bool }

func parseFilter(s string) (*filter, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if len(s) > maxFilter {
		return nil, errorf(http.StatusBadRequest, "Failed to create boolean expression evaluator: filter of %d bytes, longer than %d", len(s), maxFilter)
	}
	toks, err := lex(s)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "Failed to create boolean expression evaluator: %v", err)
	}
	p := &parser{toks: toks}
	e, err := p.or(0)
	if err == nil && p.pos < len(p.toks) {
		err = errf("unexpected %q", p.toks[p.pos].text)
	}
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "Failed to create boolean expression evaluator: %v", err)
	}
	return &filter{root: e}, nil
}

// match reports whether f (nil: no filter) keeps what fs describes.
func (f *filter) match(fs fields) bool { return f == nil || f.root.eval(fs) }

type tok struct {
	text  string
	quote bool // a quoted value
}

type strError string

func (e strError) Error() string { return string(e) }

func errf(format string, args ...any) error {
	return strError(fmt.Sprintf(format, args...))
}

func lex(s string) ([]tok, error) {
	var out []tok
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')':
			out = append(out, tok{text: string(c)})
			i++
		case c == '=' || c == '!':
			if i+1 < len(s) && s[i+1] == '=' {
				out = append(out, tok{text: s[i : i+2]})
				i += 2
			} else {
				return nil, errf("unexpected %q at %d", c, i)
			}
		case c == '"' || c == '`':
			j := i + 1
			var b strings.Builder
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && c == '"' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, errf("unterminated string at %d", i)
			}
			out = append(out, tok{text: b.String(), quote: true})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r()=!\"`", rune(s[j])) {
				j++
			}
			if j == i {
				return nil, errf("unexpected %q at %d", c, i)
			}
			out = append(out, tok{text: s[i:j]})
			i = j
		}
		if len(out) > 512 {
			return nil, errf("more than 512 tokens")
		}
	}
	return out, nil
}

type parser struct {
	toks []tok
	pos  int
}

func (p *parser) peek(word string) bool {
	return p.pos < len(p.toks) && !p.toks[p.pos].quote && strings.EqualFold(p.toks[p.pos].text, word)
}

func (p *parser) next() (tok, bool) {
	if p.pos >= len(p.toks) {
		return tok{}, false
	}
	p.pos++
	return p.toks[p.pos-1], true
}

const maxDepth = 32

func (p *parser) or(depth int) (expr, error) {
	l, err := p.and(depth)
	for err == nil && p.peek("or") {
		p.pos++
		var r expr
		if r, err = p.and(depth); err == nil {
			l = orExpr{l, r}
		}
	}
	return l, err
}

func (p *parser) and(depth int) (expr, error) {
	l, err := p.unary(depth)
	for err == nil && p.peek("and") {
		p.pos++
		var r expr
		if r, err = p.unary(depth); err == nil {
			l = andExpr{l, r}
		}
	}
	return l, err
}

func (p *parser) unary(depth int) (expr, error) {
	if depth > maxDepth {
		return nil, errf("nested more than %d deep", maxDepth)
	}
	if p.peek("not") {
		p.pos++
		e, err := p.unary(depth + 1)
		return notExpr{e}, err
	}
	if p.peek("(") {
		p.pos++
		e, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if !p.peek(")") {
			return nil, errf("missing )")
		}
		p.pos++
		return e, nil
	}
	return p.match()
}

// match is `Selector op "value"`, `"value" [not] in Selector` or
// `Selector is [not] empty`.
func (p *parser) match() (expr, error) {
	first, ok := p.next()
	if !ok {
		return nil, errf("expression ends too soon")
	}
	if first.quote || isNumber(first.text) {
		neg := false
		if p.peek("not") {
			p.pos++
			neg = true
		}
		if !p.peek("in") {
			return nil, errf("expected 'in' after value %q", first.text)
		}
		p.pos++
		sel, ok := p.next()
		if !ok || sel.quote {
			return nil, errf("expected a selector after 'in'")
		}
		return matchExpr{sel: sel.text, op: "contains", value: first.text, neg: neg}, nil
	}
	if !validSelector(first.text) {
		return nil, errf("invalid selector %q", first.text)
	}
	op, ok := p.next()
	if !ok {
		return nil, errf("expected an operator after %q", first.text)
	}
	m := matchExpr{sel: first.text}
	switch strings.ToLower(op.text) {
	case "==", "!=":
		m.op, m.neg = "==", op.text == "!="
	case "is":
		if p.peek("not") {
			p.pos++
			m.neg = true
		}
		if !p.peek("empty") {
			return nil, errf("expected 'empty' after 'is'")
		}
		p.pos++
		m.op = "empty"
		return m, nil
	case "not":
		m.neg = true
		op, ok = p.next()
		if !ok || (op.text != "contains" && op.text != "matches") {
			return nil, errf("expected contains or matches after 'not'")
		}
		m.op = op.text
	case "contains", "matches":
		m.op = op.text
	default:
		return nil, errf("unknown operator %q", op.text)
	}
	v, ok := p.next()
	if !ok {
		return nil, errf("expected a value after %q", op.text)
	}
	m.value = v.text
	if m.op == "matches" {
		re, err := regexp.Compile(v.text)
		if err != nil {
			return nil, errf("invalid regular expression %q: %v", v.text, err)
		}
		m.re = re
	}
	return m, nil
}

func isNumber(s string) bool { _, err := strconv.ParseFloat(s, 64); return err == nil }

func validSelector(s string) bool {
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return s != "" && unicode.IsLetter(rune(s[0]))
}

type orExpr struct{ l, r expr }
type andExpr struct{ l, r expr }
type notExpr struct{ e expr }

func (e orExpr) eval(f fields) bool  { return e.l.eval(f) || e.r.eval(f) }
func (e andExpr) eval(f fields) bool { return e.l.eval(f) && e.r.eval(f) }
func (e notExpr) eval(f fields) bool { return !e.e.eval(f) }

type matchExpr struct {
	sel, op, value string
	neg            bool
	re             *regexp.Regexp
}

func (m matchExpr) eval(f fields) bool {
	return m.test(f) != m.neg
}

func (m matchExpr) test(f fields) bool {
	v := resolve(f, m.sel)
	switch m.op {
	case "empty":
		switch x := v.(type) {
		case string:
			return x == ""
		case []string:
			return len(x) == 0
		case map[string]string:
			return len(x) == 0
		}
		return true
	case "==":
		s, ok := v.(string)
		return ok && s == m.value
	case "contains":
		switch x := v.(type) {
		case string:
			return strings.Contains(x, m.value)
		case []string:
			return slices.Contains(x, m.value)
		case map[string]string:
			_, ok := x[m.value]
			return ok
		}
	case "matches":
		s, ok := v.(string)
		return ok && m.re.MatchString(s)
	}
	return false
}

// resolve follows a dotted selector; a map's part is a key of it.
func resolve(f fields, sel string) any {
	if v, ok := f[sel]; ok {
		return v
	}
	i := strings.LastIndexByte(sel, '.')
	if i < 0 {
		return nil
	}
	if m, ok := f[sel[:i]].(map[string]string); ok {
		if v, ok := m[sel[i+1:]]; ok {
			return v
		}
		return ""
	}
	return nil
}

// The selectors of each answer's elements, named as Consul's are.

func agentServiceFields(s agentService) fields {
	return fields{"ID": s.ID, "Service": s.Service, "Tags": s.Tags, "Meta": s.Meta, "Address": s.Address,
		"Port": strconv.Itoa(s.Port), "Datacenter": s.Datacenter, "Kind": ""}
}

func nodeFields(n node) fields {
	return fields{"ID": n.ID, "Node": n.Node, "Address": n.Address, "Datacenter": n.Datacenter, "Meta": n.Meta, "TaggedAddresses": n.TaggedAddresses}
}

func catalogServiceFields(c catalogService) fields {
	return fields{"ID": c.ID, "Node": c.Node, "Address": c.Address, "Datacenter": c.Datacenter, "TaggedAddresses": c.TaggedAddresses,
		"NodeMeta": c.NodeMeta, "ServiceKind": "", "ServiceID": c.ServiceID, "ServiceName": c.ServiceName, "ServiceTags": c.ServiceTags,
		"ServiceAddress": c.ServiceAddress, "ServiceMeta": c.ServiceMeta, "ServicePort": strconv.Itoa(c.ServicePort)}
}

func serviceEntryFields(e serviceEntry) fields {
	f := fields{"Node.ID": e.Node.ID, "Node.Node": e.Node.Node, "Node.Address": e.Node.Address, "Node.Datacenter": e.Node.Datacenter,
		"Node.Meta": e.Node.Meta, "Node.TaggedAddresses": e.Node.TaggedAddresses,
		"Service.ID": e.Service.ID, "Service.Service": e.Service.Service, "Service.Tags": e.Service.Tags, "Service.Meta": e.Service.Meta,
		"Service.Address": e.Service.Address, "Service.Port": strconv.Itoa(e.Service.Port), "Service.Kind": ""}
	var statuses, names, ids []string
	for _, c := range e.Checks {
		statuses, names, ids = append(statuses, c.Status), append(names, c.Name), append(ids, c.CheckID)
	}
	f["Checks.Status"], f["Checks.Name"], f["Checks.CheckID"] = statuses, names, ids
	return f
}

func healthCheckFields(c healthCheck) fields {
	return fields{"Node": c.Node, "CheckID": c.CheckID, "Name": c.Name, "Status": c.Status, "Notes": c.Notes, "Output": c.Output,
		"ServiceID": c.ServiceID, "ServiceName": c.ServiceName, "ServiceTags": c.ServiceTags, "Type": c.Type}
}
