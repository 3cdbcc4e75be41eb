package catalog

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"

	"github.com/namecast/namecast/routes"
)

// The metadata keys a Consul registration's record reserves. Consul's own
// Meta keys are [A-Za-z0-9_-]+ (structs.ValidateServiceMetadata), so no
// user key can be one of these.
const (
	reservedPrefix  = "consul."
	metaID          = "consul.id"
	metaTags        = "consul.tags"   // JSON array
	metaChecks      = "consul.checks" // JSON array of Check
	metaTagOverride = "consul.eto"    // "true" when EnableTagOverride
)

// Bounds of one registration, Consul's where it has them
// (structs.ValidateServiceMetadata: 64 keys, 128-byte keys, 512-byte
// values) and ours elsewhere. Every one is checked before anything is
// written; the error names it.
const (
	MaxMetaKeys    = 64
	MaxMetaKeyLen  = 128
	MaxMetaValue   = 512
	MaxName        = 256
	MaxTags        = 64
	MaxTagLen      = 256
	MaxChecks      = 32
	MaxCheckOutput = 4096 // Consul's check_output_max_size default
	MaxNotes       = 1024
	// MaxRecord bounds the record a registration makes (its Curator JSON).
	MaxRecord = 32 << 10
)

var metaKey = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// Registration is what a Consul client registers (the fields of
// api.AgentServiceRegistration the record keeps); Checks are their states.
type Registration struct {
	ID                string
	Name              string
	Tags              []string
	Address           string
	Port              int
	Meta              map[string]string
	EnableTagOverride bool
	Checks            []Check
}

// Validate checks the registration against Consul's rules and our
// bounds; the error is the message a 400 carries.
func (r Registration) Validate() error {
	if r.Name == "" {
		return fmt.Errorf("Missing service name")
	}
	for what, s := range map[string]string{"service name": r.Name, "service ID": r.ID} {
		if len(s) > MaxName {
			return fmt.Errorf("%s is %d bytes, longer than %d", what, len(s), MaxName)
		}
		if strings.ContainsAny(s, "/\x00") || hasControl(s) {
			return fmt.Errorf("%s %q holds '/' or a control character (namecast keeps it in a path)", what, s)
		}
	}
	if r.ID == "" {
		return fmt.Errorf("Missing service ID")
	}
	if r.Port < 0 || r.Port > 65535 {
		return fmt.Errorf("Invalid service port %d", r.Port)
	}
	if len(r.Address) > MaxName || hasControl(r.Address) {
		return fmt.Errorf("service address of %d bytes or with a control character (limit %d)", len(r.Address), MaxName)
	}
	if len(r.Tags) > MaxTags {
		return fmt.Errorf("%d tags, more than %d", len(r.Tags), MaxTags)
	}
	for _, t := range r.Tags {
		if len(t) > MaxTagLen {
			return fmt.Errorf("tag of %d bytes, longer than %d", len(t), MaxTagLen)
		}
	}
	if len(r.Meta) > MaxMetaKeys {
		return fmt.Errorf("Invalid service meta: Node metadata cannot contain more than %d key/value pairs", MaxMetaKeys)
	}
	for k, v := range r.Meta {
		switch {
		case k == "":
			return fmt.Errorf("Invalid service meta: Key cannot be blank")
		case !metaKey.MatchString(k):
			return fmt.Errorf("Invalid service meta: Key contains invalid characters")
		case len(k) > MaxMetaKeyLen:
			return fmt.Errorf("Invalid service meta: Key is too long (limit: %d characters)", MaxMetaKeyLen)
		case strings.HasPrefix(k, "consul-"):
			return fmt.Errorf("Invalid service meta: Key prefix 'consul-' is reserved for internal use")
		case len(v) > MaxMetaValue:
			return fmt.Errorf("Invalid service meta: Value is too long (limit: %d characters)", MaxMetaValue)
		}
	}
	if len(r.Checks) > MaxChecks {
		return fmt.Errorf("%d checks on one service, more than %d", len(r.Checks), MaxChecks)
	}
	for _, c := range r.Checks {
		switch c.Status {
		case Passing, Warning, Critical:
		default:
			return fmt.Errorf("Invalid Check status %q", c.Status)
		}
	}
	return nil
}

// Path is the znode a registration is: the application instance
// /services/{name}/{id}@{node}. The node is in the path because Consul
// service IDs are unique per node only ("web" on every node).
func Path(name, id, node string) string { return routes.InstancePath(name, id+"@"+node) }

// Record is the registration as the record the Consul door of node
// applies: a Curator instance znode whose payload metadata is the
// service's Meta plus the reserved consul.* keys. owner is the znode's
// ephemeral owner (the agent's, as for every door's own instance),
// registeredMs its registration time. Each check's output is cut to
// MaxCheckOutput. The error names a bound the record would pass.
func (r Registration) Record(node string, owner, registeredMs int64) (routes.Record, error) {
	if err := r.Validate(); err != nil {
		return routes.Record{}, err
	}
	md := maps.Clone(r.Meta)
	if md == nil {
		md = map[string]string{}
	}
	md[metaID] = r.ID
	tags := r.Tags
	if tags == nil {
		tags = []string{}
	}
	b, _ := json.Marshal(tags)
	md[metaTags] = string(b)
	if len(r.Checks) > 0 {
		cs := make([]Check, len(r.Checks))
		for i, c := range r.Checks {
			c.Output = cut(c.Output, MaxCheckOutput)
			c.Notes = cut(c.Notes, MaxNotes)
			cs[i] = c
		}
		b, _ := json.Marshal(cs)
		md[metaChecks] = string(b)
	}
	if r.EnableTagOverride {
		md[metaTagOverride] = "true"
	}
	path := Path(r.Name, r.ID, node)
	data := routes.CuratorInstanceJSON(r.Name, r.ID+"@"+node, r.Address, r.Port, md, registeredMs)
	if len(data) > MaxRecord {
		return routes.Record{}, fmt.Errorf("the registration makes a record of %d bytes, more than namecast's limit of %d (fewer or shorter tags, meta or check outputs)", len(data), MaxRecord)
	}
	return routes.Record{Znode: &routes.Znode{Path: path, Data: data, Ctime: registeredMs, Mtime: registeredMs, Owner: owner}}, nil
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func hasControl(s string) bool {
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// ParseStatus reads a check status as Consul's API spells it.
func ParseStatus(s string) (string, error) {
	switch s {
	case Passing, Warning, Critical:
		return s, nil
	}
	return "", fmt.Errorf("Invalid check status: %s", strconv.Quote(s))
}
