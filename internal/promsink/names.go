package promsink

import (
	"strings"
	"unicode"
)

type kind int

const (
	counter kind = iota
	gauge
	summary
)

// units names the unit of series whose go-metrics key does not say it,
// by the key's flattened name (rule 2 of the package comment): "bytes",
// or "" for a plain count. A summary not listed here is a timer.
var units = map[string]string{
	"namecast_memberlist_udp_sent":         "bytes",
	"namecast_memberlist_udp_received":     "bytes",
	"namecast_memberlist_tcp_sent":         "bytes",
	"namecast_memberlist_size_local":       "bytes",
	"namecast_memberlist_size_remote":      "bytes",
	"namecast_memberlist_queue_broadcasts": "",
}

// Name is the Prometheus name of the go-metrics key parts emitted as kind,
// and the factor its values are multiplied by (to base units).
func Name(k kind, parts []string) (name string, scale float64) {
	name = flatten(parts)
	scale = 1
	if unit, ok := units[name]; ok {
		if unit != "" && !strings.HasSuffix(name, "_"+unit) {
			name += "_" + unit
		}
	} else if base, ok := strings.CutSuffix(name, "_ms"); ok {
		name, scale = base+"_seconds", 1e-3
	} else if k == summary && !strings.HasSuffix(name, "_seconds") {
		name, scale = name+"_seconds", 1e-3
	}
	if k == counter && !strings.HasSuffix(name, "_total") {
		name += "_total"
	}
	return name, scale
}

// flatten joins key parts into one snake_case name.
func flatten(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('_')
		}
		prevLower := false
		for _, r := range p {
			switch {
			case r >= 'A' && r <= 'Z':
				if prevLower {
					b.WriteByte('_')
				}
				b.WriteRune(unicode.ToLower(r))
				prevLower = false
			case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
				prevLower = true
			default:
				b.WriteByte('_')
				prevLower = false
			}
		}
	}
	return b.String()
}

// labelName makes a go-metrics label name a valid Prometheus one.
func labelName(s string) string {
	if s == "" {
		return "label"
	}
	n := flatten([]string{s})
	if n[0] >= '0' && n[0] <= '9' {
		n = "_" + n
	}
	return n
}

// defaultHelp is the HELP of a series help.go does not describe yet: the
// key's words, so it still reads as a sentence rather than the name.
func defaultHelp(k kind, parts []string) string {
	words := strings.ReplaceAll(strings.Join(parts, " "), "_", " ")
	switch k {
	case counter:
		return "Count of " + words + " (go-metrics key " + strings.Join(parts, ".") + ")."
	case summary:
		return "Timing of " + words + " (go-metrics key " + strings.Join(parts, ".") + ")."
	}
	return "Current " + words + " (go-metrics key " + strings.Join(parts, ".") + ")."
}
