package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"time"

	"github.com/hashicorp/serf/coordinate"

	"github.com/namecast/namecast/agent/httpapi"
	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/internal/buildinfo"
)

// httpAgent is what the HTTP door asks of its agent (httpapi.Agent).
type httpAgent struct{ a *Agent }

func (h httpAgent) Members() []gossip.Member         { return h.a.gossip.Members() }
func (h httpAgent) AliveMembers() int                { return h.a.gossip.AliveMembers() }
func (h httpAgent) Join(addrs []string) (int, error) { return join(h.a.gossip, addrs) }
func (h httpAgent) RequestLeave()                    { h.a.leftOnce.Do(func() { close(h.a.left) }) }
func (h httpAgent) Leaving() bool                    { return h.a.leaving.Load() }
func (h httpAgent) Metrics() http.Handler {
	return metricsHandler(h.a.prom, h.a.metrics, h.a.table, h.a.gossip)
}
func (h httpAgent) ChangeKeys(ctx context.Context, op, key string) (any, error) {
	return h.a.changeKeys(ctx, op, key)
}

func (h httpAgent) Coordinates() (*coordinate.Coordinate, map[string]*coordinate.Coordinate) {
	return h.a.gossip.Coordinates()
}

// Info describes the agent for GET /v1/agent.
func (h httpAgent) Info() (httpapi.AgentInfo, error) {
	a := h.a
	// Encoded as the answer around it is: & < > as themselves.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a.cfg.redacted()); err != nil {
		return httpapi.AgentInfo{}, err
	}
	cfg := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	started := a.readiness.started
	return httpapi.AgentInfo{
		Node: a.cfg.NodeName, Version: a.cfg.version(), GoVersion: runtime.Version(),
		Started: started.UTC().Truncate(time.Second), Uptime: time.Since(started).Round(time.Second).String(),
		Incarnation: a.table.Digest()[a.cfg.NodeName].Inc,
		GossipAddr:  a.GossipAddr(), MetricsAddr: a.MetricsAddr(), Doors: a.Doors(), Ready: a.Ready(), Config: cfg,
	}, nil
}

// redacted stands in for a secret that is set.
const redacted = "<redacted>"

// redacted is the configuration as its config file would say it,
// secrets replaced: it is shown to anyone who can read the API.
func (c Config) redacted() Config {
	for _, d := range c.Doors() {
		if d.Redact != nil {
			d.Redact(redacted)
		}
	}
	if c.EncryptKey != "" {
		c.EncryptKey = redacted
	}
	return c
}

// version is the binary's version: Config.Version, else the module's.
func (c *Config) version() string {
	if c.Version != "" {
		return c.Version
	}
	return buildinfo.Version()
}
