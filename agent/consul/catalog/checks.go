package catalog

import "time"

// CheckDef is a check as a client defines it (Consul's CheckType and
// AgentCheckRegistration, durations parsed): what the agent holding the
// service runs. It stays on that agent (with --data-dir, in the Consul
// door's lease state); only its state (Check) spreads, in the record.
type CheckDef struct {
	ID        string
	Name      string
	ServiceID string
	Notes     string
	// Status is the initial status; "" is critical, Consul's default.
	Status string
	// Exactly one of TTL, HTTP and TCP says the kind; Interval and
	// Timeout go with HTTP and TCP.
	TTL           time.Duration
	HTTP          string
	Method        string
	Header        map[string][]string
	Body          string
	TLSSkipVerify bool
	TCP           string
	Interval      time.Duration
	Timeout       time.Duration
	// DeregisterCriticalServiceAfter, when positive, deregisters the
	// service once this check has been critical that long.
	DeregisterCriticalServiceAfter time.Duration
}

// Type is Consul's name of the check's kind: "ttl", "http", "tcp", or ""
// for a check that has none.
func (d CheckDef) Type() string {
	switch {
	case d.TTL > 0:
		return "ttl"
	case d.HTTP != "":
		return "http"
	case d.TCP != "":
		return "tcp"
	}
	return ""
}

// Runner runs the checks of one agent's Consul services (package
// agent/consul/checks implements it). The Consul door calls it; it
// reports back through the funcs it was built with (a status change, a
// service to deregister), called outside its own locks.
type Runner interface {
	// Set starts running def (or replaces the check of def.ID).
	Set(def CheckDef) error
	// Remove stops the check id; a check not known is nothing.
	Remove(id string)
	// UpdateTTL sets a TTL check's status and output and restarts its
	// TTL; an error says the check is not known or not a TTL check.
	UpdateTTL(id, status, output string) error
	// Close stops every check and waits for its goroutines.
	Close()
}
