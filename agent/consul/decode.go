package consul

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/consul/catalog"
)

// What clients send: Consul's api.AgentServiceRegistration and
// api.AgentCheckRegistration (api/agent.go), the fields this door reads
// or refuses. Unknown fields are ignored, as Consul ignores them.
type serviceDefinition struct {
	Kind              string
	ID                string
	Name              string
	Tags              []string
	Port              int
	Address           string
	Meta              map[string]string
	EnableTagOverride bool
	Check             *checkDefinition
	Checks            []*checkDefinition
	Proxy             json.RawMessage
	Connect           json.RawMessage
	SocketPath        string
	Namespace         string
	Partition         string
}

type checkDefinition struct {
	ID                             string
	CheckID                        string
	Name                           string
	Notes                          string
	ServiceID                      string
	Status                         string
	TTL                            duration
	HTTP                           string
	Header                         map[string][]string
	Method                         string
	Body                           string
	TLSSkipVerify                  bool
	TCP                            string
	Interval                       duration
	Timeout                        duration
	DeregisterCriticalServiceAfter duration
	// Kinds this door does not run.
	Args              []string
	ScriptArgs        []string
	DockerContainerID string
	GRPC              string
	H2PING            string
	UDP               string
	OSService         string
	AliasNode         string
	AliasService      string
}

// duration reads Consul's durations: a string time.ParseDuration takes
// ("10s"), or a number of nanoseconds.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if s == "" {
			*d = 0
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("a duration must be a string like \"10s\" or a number of nanoseconds")
	}
	*d = duration(n)
	return nil
}

// Bounds of a check definition beside catalog's.
const (
	minInterval   = time.Second // Consul's MinInterval
	maxCheckURL   = 2048
	maxCheckBody  = 16 << 10
	maxHeaders    = 32
	defaultTimout = 10 * time.Second
)

const invalidCheckMessage = "Must provide TTL or Script/DockerContainerID/HTTP/TCP and Interval" // agent_endpoint.go

// decodeBody reads a JSON body of at most maxBody bytes into v, with
// Consul's message for a body it cannot read.
func decodeBody(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errorf(http.StatusRequestEntityTooLarge, "Request body too large, max size: %d bytes", maxBody)
		}
		return errorf(http.StatusBadRequest, "Request decode failed: %v", err)
	}
	if len(b) > maxBody {
		return errorf(http.StatusRequestEntityTooLarge, "Request body too large, max size: %d bytes", maxBody)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errorf(http.StatusBadRequest, "Request decode failed: %v", err)
	}
	return nil
}

// checkDef turns a check definition into what the runner runs, as
// Consul's CheckType.Valid and its defaults do; refused: kinds this door
// does not run, and definitions past its bounds.
func (c *checkDefinition) checkDef() (catalog.CheckDef, error) {
	d := catalog.CheckDef{ID: c.CheckID, Name: c.Name, ServiceID: c.ServiceID, Notes: c.Notes, Status: c.Status,
		TTL: time.Duration(c.TTL), HTTP: c.HTTP, Method: c.Method, Header: c.Header, Body: c.Body, TLSSkipVerify: c.TLSSkipVerify,
		TCP: c.TCP, Interval: time.Duration(c.Interval), Timeout: time.Duration(c.Timeout),
		DeregisterCriticalServiceAfter: time.Duration(c.DeregisterCriticalServiceAfter)}
	if d.ID == "" {
		d.ID = c.ID
	}
	if d.Status != "" {
		if _, err := catalog.ParseStatus(d.Status); err != nil {
			return d, errorf(http.StatusBadRequest, "Status for checks must 'passing', 'warning', 'critical'")
		}
	}
	for kind, set := range map[string]bool{"Script": len(c.Args)+len(c.ScriptArgs) > 0, "Docker": c.DockerContainerID != "",
		"gRPC": c.GRPC != "", "H2PING": c.H2PING != "", "UDP": c.UDP != "", "OSService": c.OSService != "",
		"Alias": c.AliasNode != "" || c.AliasService != ""} {
		if set {
			return d, errorf(http.StatusBadRequest, "%s checks are not run by namecast's Consul door: it runs TTL, HTTP and TCP checks", kind)
		}
	}
	kinds := 0
	for _, set := range []bool{d.TTL > 0, d.HTTP != "", d.TCP != ""} {
		if set {
			kinds++
		}
	}
	if kinds != 1 || d.TTL < 0 || (d.TTL == 0 && d.Interval <= 0) {
		return d, errorf(http.StatusBadRequest, invalidCheckMessage)
	}
	if d.Interval > 0 && d.Interval < minInterval {
		d.Interval = minInterval // Consul raises it, with a warning
	}
	if d.HTTP != "" && d.Timeout <= 0 || d.TCP != "" && d.Timeout <= 0 {
		d.Timeout = defaultTimout
	}
	switch {
	case len(d.HTTP) > maxCheckURL || len(d.TCP) > maxCheckURL:
		return d, errorf(http.StatusBadRequest, "check target of %d bytes, longer than %d", max(len(d.HTTP), len(d.TCP)), maxCheckURL)
	case len(d.Body) > maxCheckBody:
		return d, errorf(http.StatusBadRequest, "check body of %d bytes, longer than %d", len(d.Body), maxCheckBody)
	case len(d.Header) > maxHeaders:
		return d, errorf(http.StatusBadRequest, "check has %d headers, more than %d", len(d.Header), maxHeaders)
	case len(d.Name) > catalog.MaxName || len(d.ID) > catalog.MaxName:
		return d, errorf(http.StatusBadRequest, "check name or ID longer than %d bytes", catalog.MaxName)
	case len(d.Notes) > catalog.MaxNotes:
		return d, errorf(http.StatusBadRequest, "check notes of %d bytes, longer than %d", len(d.Notes), catalog.MaxNotes)
	case strings.ContainsAny(d.ID, "/\x00"):
		return d, errorf(http.StatusBadRequest, "check ID %s holds '/' or NUL", strconv.Quote(d.ID))
	}
	return d, nil
}
