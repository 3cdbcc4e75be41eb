package httpapi

import (
	"net/http"

	"github.com/namecast/namecast/routes"
)

// Dubbo 3's applications and instances (routes/apps.go): the views, and
// instances registered over this door.

func (s *Server) appsView(*http.Request) routes.Watch { return routes.WatchApps }

func (s *Server) appView(r *http.Request) routes.Watch { return routes.WatchApp(r.PathValue("app")) }

func (s *Server) serviceAppsView(r *http.Request) routes.Watch {
	return routes.WatchAppsOf(r.PathValue("interface"))
}

func (s *Server) getApps(*http.Request) (any, error) {
	return map[string][]routes.App{"apps": s.table.Apps()}, nil
}

func (s *Server) getApp(r *http.Request) (any, error) {
	app := r.PathValue("app")
	d, ok := s.table.App(app)
	if !ok {
		return nil, errorf(http.StatusNotFound, "no instance of application %q is registered, and no mapping names it", app)
	}
	return d, nil
}

func (s *Server) getServiceApps(r *http.Request) (any, error) {
	return map[string][]string{"apps": nonNil(s.table.AppsOf(r.PathValue("interface")))}, nil
}

func (s *Server) putInstance(r *http.Request) (any, error) {
	var req struct {
		InstanceRegistration
		TTL string `json:"ttl"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	ttl, err := parseTTL(req.TTL)
	if err != nil {
		return nil, err
	}
	if app := r.PathValue("app"); req.App != "" && req.App != app {
		return nil, errorf(http.StatusBadRequest, "the body names application %q, the path %q", req.App, app)
	}
	req.App = r.PathValue("app")
	in, err := s.RegisterInstance(req.InstanceRegistration, ttl)
	if err != nil {
		return nil, asHTTPError(err)
	}
	return in, nil
}

func (s *Server) deleteInstance(r *http.Request) (any, error) {
	app, id := r.PathValue("app"), r.PathValue("id")
	ok, err := s.UnregisterInstance(app, id)
	if err != nil {
		return nil, asHTTPError(err)
	}
	if !ok {
		return nil, errorf(http.StatusNotFound, "instance %q of application %q is not registered on this agent", id, app)
	}
	return map[string]bool{"deleted": true}, nil
}
