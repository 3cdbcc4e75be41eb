package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/serf/coordinate"

	"github.com/namecast/namecast/agent/doorkit"
)

// Read-only endpoints for looking at the cluster rather than routing in
// it: what this agent is, where each member sits in Vivaldi space, who owns
// which records, the cluster-wide rules and every broker registration with
// the agent it came through. The web UI reads these, and so can curl.

// AgentInfo is GET /v1/agent: what the agent says of itself (Agent.Info).
type AgentInfo struct {
	Node        string          `json:"node"`
	Version     string          `json:"version"`
	GoVersion   string          `json:"goVersion"`
	Started     time.Time       `json:"started"`
	Uptime      string          `json:"uptime"`
	Incarnation uint64          `json:"incarnation,string"` // a string: JSON readers in JavaScript round 64-bit numbers
	GossipAddr  string          `json:"gossipAddr"`
	MetricsAddr string          `json:"metricsAddr,omitempty"` // the --metrics listener, when on
	Ready       bool            `json:"ready"`
	Config      json.RawMessage `json:"config"`
	// Doors are the listeners of the doors that run, each shown as
	// "<name>Addr" in camel case: httpAddr, rocketmqAddr, nacosGrpcAddr.
	Doors []doorkit.Addr `json:"-"`
}

// MarshalJSON writes the fields and one key per door listener, & < > as
// themselves, as the answer around it is written.
func (i AgentInfo) MarshalJSON() ([]byte, error) {
	type fields AgentInfo
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields(i)); err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		return nil, err
	}
	for _, d := range i.Doors {
		m[addrKey(d.Name)], _ = json.Marshal(d.Addr)
	}
	buf.Reset()
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// addrKey is a listener's key in AgentInfo: nacos-grpc is nacosGrpcAddr.
func addrKey(name string) string {
	parts := strings.Split(name, "-")
	for i, p := range parts[1:] {
		if p != "" {
			parts[i+1] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "") + "Addr"
}

func (s *Server) getAgent(r *http.Request) (any, error) { return s.agent.Info() }

// MemberCoordinate is one entry of GET /v1/coordinates. Coord and RTTms
// are null until a probe of the member has completed.
type MemberCoordinate struct {
	Name  string      `json:"name"`
	Coord *Coordinate `json:"coord"`
	RTTms *float64    `json:"rttMs"`
}

// Coordinate is a Vivaldi network coordinate (serf's, with JSON names).
type Coordinate struct {
	Vec        []float64 `json:"vec"`
	Error      float64   `json:"error"`
	Adjustment float64   `json:"adjustment"`
	Height     float64   `json:"height"`
}

func toCoordinate(c *coordinate.Coordinate) *Coordinate {
	return &Coordinate{Vec: c.Vec, Error: c.Error, Adjustment: c.Adjustment, Height: c.Height}
}

// getCoordinates lists every known member, this agent first, with its
// coordinate and the round trip from this agent estimated from them.
func (s *Server) getCoordinates(r *http.Request) (any, error) {
	self, others := s.agent.Coordinates()
	zero := 0.0
	out := []MemberCoordinate{{Name: s.cfg.Node, Coord: toCoordinate(self), RTTms: &zero}}
	for _, m := range s.agent.Members() {
		if m.Name == s.cfg.Node {
			continue
		}
		mc := MemberCoordinate{Name: m.Name}
		if c, ok := others[m.Name]; ok {
			ms := float64(self.DistanceTo(c)) / float64(time.Millisecond)
			mc.Coord, mc.RTTms = toCoordinate(c), &ms
		}
		out = append(out, mc)
	}
	return out, nil
}

func (s *Server) getOrigins(r *http.Request) (any, error) { return s.table.OriginStats(), nil }

// Rule is one entry of GET /v1/rules: a record of the cluster-wide rules
// (routes.RulesOrigin) with the write that made it. Every such record is
// listed, so the count /v1/origins gives "~rules" is this list's length:
// Dubbo dynamic=false URLs ("url"), RocketMQ KV config ("kv"), and
// ZooKeeper persistent nodes ("znode": Dubbo's service-name mapping,
// config and metadata).
type Rule struct {
	Kind string `json:"kind"` // "url", "kv", "znode", or "other"
	Key  string `json:"key"`
	// Time is the write's Lamport time, a string: it passes 2^53, past
	// what a JavaScript number holds exactly.
	Time      uint64 `json:"time,string"`
	Writer    string `json:"writer"`
	Interface string `json:"interface,omitempty"`
	Category  string `json:"category,omitempty"`
	URL       string `json:"url,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Value     string `json:"value,omitempty"`
	// A znode's path, its data as text (null: none), and when it was
	// last written, in ms since the epoch on the writing agent's clock.
	Path  string  `json:"path,omitempty"`
	Data  *string `json:"data,omitempty"`
	Mtime int64   `json:"mtime,omitempty"`
}

func (s *Server) getRules(r *http.Request) (any, error) {
	out := []Rule{}
	for _, e := range s.table.Rules() {
		rule := Rule{Key: e.Key, Time: e.Time, Writer: e.Writer}
		switch rec := e.Record; {
		case rec.URL != nil:
			rule.Kind, rule.Interface, rule.Category, rule.URL = "url", rec.URL.Interface, rec.URL.Category, rec.URL.URL
		case rec.KV != nil:
			rule.Kind, rule.Namespace, rule.Name, rule.Value = "kv", rec.KV.Namespace, rec.KV.Key, rec.KV.Value
		case rec.Znode != nil:
			rule.Kind, rule.Path, rule.Mtime = "znode", rec.Znode.Path, rec.Znode.Mtime
			if rec.Znode.Data != nil {
				data := string(rec.Znode.Data)
				rule.Data = &data
			}
		default:
			rule.Kind = "other"
		}
		out = append(out, rule)
	}
	return map[string][]Rule{"rules": out}, nil
}

// BrokerEntry is one entry of GET /v1/brokers.
type BrokerEntry struct {
	Cluster    string `json:"cluster"`
	BrokerName string `json:"brokerName"`
	BrokerID   int64  `json:"brokerId"`
	Addr       string `json:"addr"`
	HAAddr     string `json:"haAddr,omitempty"`
	Zone       string `json:"zone,omitempty"`
	Origin     string `json:"origin"`
	// Lease is, with ?leases, what the origin says of the broker's last
	// registration and expiry; LeaseUnknown: the origin did not say.
	Lease        *BrokerLease `json:"lease,omitempty"`
	LeaseUnknown bool         `json:"leaseUnknown,omitempty"`
}

func (s *Server) getBrokers(r *http.Request) (any, error) {
	out := []BrokerEntry{}
	entries := s.table.BrokerEntries()
	for _, b := range entries {
		out = append(out, BrokerEntry{Cluster: b.Cluster, BrokerName: b.Name, BrokerID: b.ID, Addr: b.Addr,
			HAAddr: b.HAAddr, Zone: b.Zone, Origin: b.Origin})
	}
	if r.URL.Query().Has("leases") {
		var origins []string
		for _, b := range entries {
			if !slices.Contains(origins, b.Origin) {
				origins = append(origins, b.Origin)
			}
		}
		views := s.leasesOf(r.Context(), origins)
		for i := range out {
			e := &out[i]
			e.LeaseUnknown = true
			for _, bl := range views[e.Origin].Brokers {
				if bl.Cluster == e.Cluster && bl.BrokerName == e.BrokerName && bl.BrokerID == e.BrokerID && bl.Addr == e.Addr {
					e.Lease, e.LeaseUnknown = &bl, false
					break
				}
			}
		}
	}
	return map[string][]BrokerEntry{"brokers": out}, nil
}
