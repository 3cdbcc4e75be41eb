package dns

import "strings"

// Catalog is what the door answers from: the agent's services and nodes in
// Consul's terms (the Consul door's model of the replicated table). Its
// methods are called on every query, concurrently, and must not block.
type Catalog interface {
	// Instances are the registered instances of the service named name
	// (compared without regard to case, as Consul's catalog does), with
	// their health, in any order; none when no such service is known.
	Instances(name string) []Instance
	// Node is the node (agent) named name, compared without regard to case.
	Node(name string) (Node, bool)
}

// Instance is one registered instance of a service.
type Instance struct {
	// Node is the name of the node (agent) that holds the instance, and
	// NodeAddr that node's address: an IP, or a host name.
	Node, NodeAddr string
	// Address is the instance's own address (IP or host name); "": the
	// node's.
	Address string
	Port    int
	Tags    []string
	// Status is the instance's checks taken together, worst first:
	// "passing", "warning" or "critical" (Consul's api.HealthChecks
	// AggregatedStatus; "maintenance" counts as critical).
	Status string
	// Weights are the SRV weights of a passing and of a warning
	// instance; zero Passing: Consul's default, 1 and 1.
	Weights Weights
}

// Weights are an instance's SRV weights by health (Consul's
// service.weights).
type Weights struct{ Passing, Warning int }

// Node is one node (agent) and its address: an IP, or a host name.
type Node struct{ Name, Addr string }

// Health states, as Consul spells them.
const (
	Passing  = "passing"
	Warning  = "warning"
	Critical = "critical"
)

// hasTag reports whether tags holds tag, compared without regard to case
// as Consul's tag filter does.
func hasTag(tags []string, tag string) bool {
	for _, t := range tags {
		if strings.EqualFold(t, tag) {
			return true
		}
	}
	return false
}

// healthy reports whether an instance of status is served: not critical,
// and passing when onlyPassing (Consul's dns_config.only_passing).
func healthy(status string, onlyPassing bool) bool {
	switch status {
	case Passing:
		return true
	case Warning:
		return !onlyPassing
	default:
		return false
	}
}

// weight is the SRV weight of inst (Consul's findWeight).
func (inst Instance) weight() uint16 {
	w := inst.Weights
	if w.Passing == 0 {
		w = Weights{Passing: 1, Warning: 1}
	}
	if inst.Status == Warning {
		return uint16(w.Warning)
	}
	return uint16(w.Passing)
}
