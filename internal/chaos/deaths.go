package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// DeathLog is a slog.Handler that records every departure a gossip
// instance logs ("member dead", "member left", "member leaving"), with the
// node that saw it. Give it as the logger of every node of a run: a member
// declared dead and back between two polls of the membership still shows
// here.
//
// It also keeps the failure detector's trail, memberlist's own lines about
// suspicion (a suspect declared, refuted or confirmed, a probe answered
// only over TCP, a queue overflowing), so a test that sees a false death
// can say how it came about: who suspected whom, when, and whether the
// member refuted in time.
type DeathLog struct {
	state     *deathState
	node      string // from a "node" attribute, when the logger has one
	component string // "memberlist" for memberlist's own lines
}

type deathState struct {
	mu     sync.Mutex
	events []string
	trail  []string
}

// maxTrail bounds the trail: a healthy 5-minute soak at 10% loss logs a few
// hundred suspicions; past this the log keeps counting departures only.
const maxTrail = 20000

// NewDeathLog returns an empty log.
func NewDeathLog() *DeathLog { return &DeathLog{state: &deathState{}} }

// departures are the messages gossip logs when it drops a member.
var departures = map[string]bool{"member dead": true, "member left": true, "member leaving": true}

func (h *DeathLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *DeathLog) Handle(_ context.Context, r slog.Record) error {
	observer, member := h.node, ""
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "member":
			member = a.Value.String()
		case "node":
			observer = a.Value.String()
		}
		return true
	})
	at := r.Time.Format("15:04:05.000")
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	switch {
	case departures[r.Message]:
		e := fmt.Sprintf("%s at %s: %s saw %s", r.Message, at, observer, member)
		h.state.events = append(h.state.events, e)
		if len(h.state.trail) < maxTrail {
			h.state.trail = append(h.state.trail, e)
		}
	case h.component == "memberlist" && len(h.state.trail) < maxTrail:
		h.state.trail = append(h.state.trail, fmt.Sprintf("%s %s: %s", at, observer, r.Message))
	}
	return nil
}

func (h *DeathLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	for _, a := range attrs {
		switch a.Key {
		case "node":
			c.node = a.Value.String()
		case "component":
			c.component = a.Value.String()
		}
	}
	return &c
}

func (h *DeathLog) WithGroup(string) slog.Handler { return h }

// Events lists the departures seen so far.
func (h *DeathLog) Events() []string {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	return append([]string(nil), h.state.events...)
}

// Trail lists, in the order logged, the departures and memberlist's lines
// at info level and above that mention one of names (all of them when
// names is empty): for a false death, the suspicions and refutations that
// led to it.
func (h *DeathLog) Trail(names ...string) []string {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	var out []string
	for _, l := range h.state.trail {
		if len(names) == 0 || mentions(l, names) {
			out = append(out, l)
		}
	}
	return out
}

// mentions reports whether line names one of names as a whole word, so
// agent-1 does not match agent-10 nor "c" every "Suspect".
func mentions(line string, names []string) bool {
	for _, n := range names {
		for i := 0; n != ""; {
			j := strings.Index(line[i:], n)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(n)
			if (start == 0 || !nameByte(line[start-1])) && (end == len(line) || !nameByte(line[end])) {
				return true
			}
			i = start + 1
		}
	}
	return false
}

func nameByte(b byte) bool {
	return b == '-' || b == '_' || b == '.' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// Suspicions counts the suspicions memberlist raised ("Suspect X has
// failed, no acks received"): each one a member that then had to refute in
// time, so a run's margin shows even when it passes.
func (h *DeathLog) Suspicions() int {
	h.state.mu.Lock()
	defer h.state.mu.Unlock()
	n := 0
	for _, l := range h.state.trail {
		if strings.Contains(l, "has failed, no acks received") {
			n++
		}
	}
	return n
}
