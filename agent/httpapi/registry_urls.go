package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/namecast/namecast/dubbo"
	"github.com/namecast/namecast/routes"
)

// RegisterURL registers a service URL on this agent (identity: the
// canonical URL, parameters sorted). ttl 0 means it lives as long as the
// agent; re-registering renews the TTL.
//
// A URL with dynamic=false (routers, configurators written by an operator)
// is a cluster-scoped rule instead: it belongs to no agent, survives the
// one it was written on, and any agent may delete it. It takes no TTL.
func (s *Server) RegisterURL(raw string, ttl time.Duration) (routes.URL, error) {
	rec, u, err := urlRecord(raw)
	if err != nil {
		return routes.URL{}, err
	}
	dynamic := u.Dynamic()
	// A registration with no host hands every consumer a provider it
	// cannot call. (Unregistering one made before this check still works.)
	if dynamic && u.Host() == "" {
		return routes.URL{}, fmt.Errorf("url %q names no host: a registration says where its service answers, like dubbo://10.0.0.5:20880/%s (a cluster-wide rule takes dynamic=false)", raw, rec.Interface)
	}
	if !dynamic {
		if ttl > 0 {
			return routes.URL{}, fmt.Errorf("ttl does not apply to a persistent (dynamic=false) URL: it lives until deleted")
		}
		if _, err := s.host.ApplyRules([]routes.Record{{URL: &rec}}, nil); err != nil {
			return routes.URL{}, storeError(err)
		}
		return rec, nil
	}
	s.regMu.Lock()
	key := routes.URLKey(rec.Interface, rec.Category, rec.URL)
	if err := s.writeHTTP(key, nil, ttl, []routes.Record{{URL: &rec}}, nil, nil); err != nil {
		return routes.URL{}, err
	}
	return rec, nil
}

// UnregisterURL removes a URL registered on this agent; matching is on the
// full canonical URL, as Dubbo's unregister does.
func (s *Server) UnregisterURL(raw string) (bool, error) {
	rec, u, err := urlRecord(raw)
	if err != nil {
		return false, err
	}
	dynamic := u.Dynamic()
	key := routes.URLKey(rec.Interface, rec.Category, rec.URL)
	if !dynamic {
		ok, err := s.host.ApplyRules(nil, []string{key})
		return ok, storeError(err)
	}
	s.regMu.Lock()
	return s.withdraw(key)
}

// urlRecord parses a URL into its record, with the URL as parsed.
func urlRecord(raw string) (routes.URL, dubbo.URL, error) {
	if raw == "" {
		return routes.URL{}, dubbo.URL{}, fmt.Errorf("url is required, like dubbo://10.0.0.5:20880/com.foo.BarService?version=1.0.0")
	}
	u, err := dubbo.Parse(raw)
	if err != nil {
		return routes.URL{}, dubbo.URL{}, err
	}
	rec := routes.URL{Interface: u.Interface(), Category: u.Category(), URL: u.String()}
	if rec.Interface == "" {
		return routes.URL{}, dubbo.URL{}, fmt.Errorf("url %q names no service: give its interface as the path, like dubbo://10.0.0.5:20880/com.foo.BarService, or as interface=com.foo.BarService", raw)
	}
	if err := checkURLComponent("interface", rec.Interface); err != nil {
		return routes.URL{}, dubbo.URL{}, err
	}
	if err := checkURLComponent("category", rec.Category); err != nil {
		return routes.URL{}, dubbo.URL{}, err
	}
	return rec, u, nil
}

// storeError gives a write's failure the HTTP status it answers as: 507
// past the rules limit or the agent's record budget (the message names
// the flag to raise), 503 when the data dir could not save it.
func storeError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, routes.ErrRulesFull), errors.Is(err, routes.ErrBudget):
		return errorf(http.StatusInsufficientStorage, "%v", err)
	}
	return errorf(http.StatusServiceUnavailable, "%v", err)
}

// checkURLComponent keeps interface and category usable as key components:
// no '/', no wildcard, no control characters.
func checkURLComponent(field, s string) error {
	if s == "" || len(s) > 255 {
		return fmt.Errorf("%s must be 1-255 characters, got %d", field, len(s))
	}
	if s == "*" || strings.ContainsAny(s, "/,") {
		return fmt.Errorf("%s %q must name one %s: no '/', ',' or '*'", field, s, field)
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%s %q contains a control character", field, s)
		}
	}
	return nil
}
