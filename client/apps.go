package client

import (
	"context"
	"net/http"
	"time"
)

// App is one application of Dubbo 3's application-level discovery, as
// GET /v1/apps lists it: how many instances it has, and the interfaces
// whose service-name mapping names it.
type App struct {
	Name       string   `json:"name"`
	Instances  int      `json:"instances"`
	Interfaces []string `json:"interfaces"`
}

// AppDetail is GET /v1/apps/{app}: the application's interfaces and its
// instances, sorted by id.
type AppDetail struct {
	Name       string     `json:"name"`
	Interfaces []string   `json:"interfaces"`
	Instances  []Instance `json:"instances"`
}

// Instance is one instance of an application: the Curator ServiceInstance
// a Dubbo 3 provider registered (over ZooKeeper, or over HTTP with
// RegisterInstance), and the agent that holds it.
type Instance struct {
	App      string            `json:"app"`
	ID       string            `json:"id"`
	Address  string            `json:"address"`
	Port     int               `json:"port"`
	Revision string            `json:"revision,omitempty"` // dubbo.metadata.revision
	Metadata map[string]string `json:"metadata,omitempty"`
	// Agent is the agent whose door registered it ("" for a persistent
	// znode, which no agent holds).
	Agent string `json:"agent"`
	// Services are the interfaces of the metadata registered for Revision,
	// when there is one.
	Services   []string `json:"services,omitempty"`
	Registered int64    `json:"registrationTimeUTC,omitempty"` // ms since the epoch
	// Problem says why the znode's data is not a ServiceInstance.
	Problem string `json:"problem,omitempty"`
}

// InstanceRegistration is the body of PUT /v1/apps/{app}/instances.
type InstanceRegistration struct {
	Address string `json:"address"`
	Port    int    `json:"port"`
	// ID defaults to address:port, as Dubbo names instances.
	ID string `json:"id,omitempty"`
	// Interfaces the instance exports over Protocol (default dubbo): the
	// agent writes their mapping and the application's metadata, so
	// Dubbo 3 consumers find them.
	Interfaces []string          `json:"interfaces,omitempty"`
	Protocol   string            `json:"protocol,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

// Apps lists every application, sorted by name.
func (c *Client) Apps(ctx context.Context, q *QueryOptions) ([]App, *QueryMeta, error) {
	var out struct {
		Apps []App `json:"apps"`
	}
	meta, err := c.query(ctx, "/v1/apps", nil, q, &out)
	return out.Apps, meta, err
}

// App returns one application's instances. An application with no
// instance that no mapping names is a StatusError for which IsNotFound
// holds.
func (c *Client) App(ctx context.Context, app string, q *QueryOptions) (AppDetail, *QueryMeta, error) {
	var out AppDetail
	meta, err := c.query(ctx, segments("v1", "apps", app), nil, q, &out)
	return out, meta, err
}

// RegisterInstance registers an instance of app on the agent. A positive
// ttl withdraws it unless it is registered again within ttl; zero keeps it
// as long as the agent lives.
func (c *Client) RegisterInstance(ctx context.Context, app string, reg InstanceRegistration, ttl time.Duration) (Instance, error) {
	in := struct {
		InstanceRegistration
		TTL string `json:"ttl,omitempty"`
	}{InstanceRegistration: reg}
	if ttl > 0 {
		in.TTL = formatDuration(ttl)
	}
	var out Instance
	err := c.write(ctx, http.MethodPut, segments("v1", "apps", app, "instances"), nil, in, &out)
	return out, err
}

// UnregisterInstance withdraws an instance registered on the agent over
// HTTP.
func (c *Client) UnregisterInstance(ctx context.Context, app, id string) error {
	return c.write(ctx, http.MethodDelete, segments("v1", "apps", app, "instances", id), nil, nil, nil)
}

// WatchApps is WatchTopicRoute for the application list: fn gets it on
// every change (an instance coming or going, a mapping written).
func (c *Client) WatchApps(ctx context.Context, fn func([]App, error)) error {
	return watch(ctx, c, c.Apps, fn)
}

// WatchApp is WatchTopicRoute for one application: fn gets its detail on
// every change of its instances, metadata or mapping.
func (c *Client) WatchApp(ctx context.Context, app string, fn func(AppDetail, error)) error {
	return watch(ctx, c, func(ctx context.Context, q *QueryOptions) (AppDetail, *QueryMeta, error) {
		return c.App(ctx, app, q)
	}, fn)
}
