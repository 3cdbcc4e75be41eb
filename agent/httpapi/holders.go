package httpapi

import (
	"fmt"
	"sort"
	"strings"

	"github.com/namecast/namecast/routes"
)

// heldElsewhere completes a "not registered on this agent" answer: which
// agents hold the record at key and where their HTTP API listens, since a
// registration is withdrawn through the agent it was made with (or goes
// when that agent leaves or dies).
func (s *Server) heldElsewhere(key string) string {
	var holders []string
	if key != "" {
		for _, h := range s.table.Holders(key) {
			if h.Origin != s.table.Local() && h.Origin != routes.RulesOrigin {
				holders = append(holders, h.Origin)
			}
		}
		sort.Strings(holders)
	}
	if len(holders) == 0 {
		return " (a registration is withdrawn through the agent it was made with)"
	}
	where := map[string]string{}
	for _, m := range s.agent.Members() {
		where[m.Name] = m.Tags["http"]
	}
	named := make([]string, len(holders))
	for i, h := range holders {
		named[i] = fmt.Sprintf("%q", h)
		if addr := where[h]; addr != "" {
			named[i] += " (HTTP API " + addr + ")"
		}
	}
	return fmt.Sprintf("; it is held by agent %s: withdraw it through that agent", strings.Join(named, ", "))
}

// urlKeyOf is the table key of a URL as given, "" when it does not parse.
func urlKeyOf(raw string) string {
	rec, _, err := urlRecord(raw)
	if err != nil {
		return ""
	}
	return routes.URLKey(rec.Interface, rec.Category, rec.URL)
}
