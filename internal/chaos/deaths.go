package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// DeathLog is a slog.Handler that records every departure a gossip
// instance logs ("member dead", "member left", "member leaving"), with the
// node that saw it. Give it as the logger of every node of a run: a member
// declared dead and back between two polls of the membership still shows
// here.
type DeathLog struct {
	state *deathState
	node  string // from a "node" attribute, when the logger has one
}

type deathState struct {
	mu     sync.Mutex
	events []string
}

// NewDeathLog returns an empty log.
func NewDeathLog() *DeathLog { return &DeathLog{state: &deathState{}} }

// departures are the messages gossip logs when it drops a member.
var departures = map[string]bool{"member dead": true, "member left": true, "member leaving": true}

func (h *DeathLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *DeathLog) Handle(_ context.Context, r slog.Record) error {
	if !departures[r.Message] {
		return nil
	}
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
	h.state.mu.Lock()
	h.state.events = append(h.state.events, fmt.Sprintf("%s at %s: %s saw %s", r.Message, r.Time.Format("15:04:05.000"), observer, member))
	h.state.mu.Unlock()
	return nil
}

func (h *DeathLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	for _, a := range attrs {
		if a.Key == "node" {
			c.node = a.Value.String()
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
