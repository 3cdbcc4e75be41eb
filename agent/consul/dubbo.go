package consul

import (
	"slices"

	"github.com/namecast/namecast/agent/consul/catalog"
	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/routes"
)

// A Dubbo provider that registers through Dubbo's own Consul registry
// (dubbo-registry-consul's ConsulRegistry: service = interface, tag
// "dubbo", its URL in Meta["url"]) is also the Dubbo URL record every
// other door serves, so a consumer on ZooKeeper, Nacos or HTTP calls it,
// while its checks pass: a consumer of those doors knows nothing of
// Consul's checks, so a provider that is not passing is withdrawn from
// them (and stays a critical Consul service). The catalog lists the
// provider once, as the Consul registration (catalog.Lookup).

// providerURL is reg's Dubbo URL record, when reg is such a provider and
// passing.
func providerURL(reg catalog.Registration) (routes.URL, bool) {
	raw := reg.Meta[catalog.DubboURLMeta]
	if raw == "" || !slices.Contains(reg.Tags, catalog.DubboTag) || catalog.Worst(reg.Checks) != catalog.Passing {
		return routes.URL{}, false
	}
	u, err := dubbo.Parse(raw)
	if err != nil || u.Interface() != reg.Name || u.Category() != dubbo.CategoryProviders || !u.Dynamic() || u.Host() == "" {
		return routes.URL{}, false
	}
	return routes.URL{Interface: u.Interface(), Category: u.Category(), URL: u.String()}, true
}
