package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Categories of a service URL, as Dubbo files them.
const (
	CategoryProviders     = "providers"
	CategoryConsumers     = "consumers"
	CategoryRouters       = "routers"
	CategoryConfigurators = "configurators"
)

// RegisterURL registers a Dubbo-style service URL such as
// "dubbo://10.0.0.5:20880/com.foo.Bar?version=1.0.0" on the agent. The URL's
// category parameter files it (providers when absent). A positive ttl
// withdraws it unless it is registered again within ttl; zero keeps it as
// long as the agent lives.
func (c *Client) RegisterURL(ctx context.Context, rawURL string, ttl time.Duration) (RegisteredURL, error) {
	in := struct {
		URL string `json:"url"`
		TTL string `json:"ttl,omitempty"`
	}{URL: rawURL}
	if ttl > 0 {
		in.TTL = formatDuration(ttl)
	}
	var out RegisteredURL
	err := c.write(ctx, http.MethodPut, "/v1/urls", nil, in, &out)
	return out, err
}

// UnregisterURL withdraws a URL registered on the agent. Any form of the URL
// that has the same canonical form works.
func (c *Client) UnregisterURL(ctx context.Context, rawURL string) error {
	return c.write(ctx, http.MethodDelete, "/v1/urls", url.Values{"url": {rawURL}}, nil, nil)
}

// Services lists every interface with a registered URL, sorted.
func (c *Client) Services(ctx context.Context, q *QueryOptions) ([]string, *QueryMeta, error) {
	var out struct {
		Services []string `json:"services"`
	}
	meta, err := c.query(ctx, "/v1/services", nil, q, &out)
	return out.Services, meta, err
}

// ServiceSummaries lists every interface with a provider or consumer,
// interface- or application-level, sorted, each with its counts.
func (c *Client) ServiceSummaries(ctx context.Context, q *QueryOptions) ([]ServiceSummary, *QueryMeta, error) {
	var out struct {
		Services []ServiceSummary `json:"services"`
	}
	meta, err := c.query(ctx, "/v1/services", url.Values{"detail": {""}}, q, &out)
	return out.Services, meta, err
}

// URLs lists the URLs registered for iface in category (such as
// CategoryProviders), sorted. An empty category leaves the choice to the
// agent. An interface nobody registered is a StatusError for which
// IsNotFound holds.
func (c *Client) URLs(ctx context.Context, iface, category string, q *QueryOptions) ([]string, *QueryMeta, error) {
	var params url.Values
	if category != "" {
		params = url.Values{"category": {category}}
	}
	var out struct {
		URLs []string `json:"urls"`
	}
	meta, err := c.query(ctx, segments("v1", "services", iface), params, q, &out)
	return out.URLs, meta, err
}
