package httpapi

import (
	"errors"
	"net/http"
)

func (s *Server) putURL(r *http.Request) (any, error) {
	var req struct {
		URL string `json:"url"`
		TTL string `json:"ttl"`
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, err
	}
	ttl, err := parseTTL(req.TTL)
	if err != nil {
		return nil, err
	}
	u, err := s.RegisterURL(req.URL, ttl)
	if err != nil {
		return nil, asHTTPError(err)
	}
	return map[string]string{"url": u.URL, "interface": u.Interface, "category": u.Category}, nil
}

func (s *Server) deleteURL(r *http.Request) (any, error) {
	raw := r.URL.Query().Get("url")
	if raw == "" {
		return nil, errorf(http.StatusBadRequest, "url query parameter is required: DELETE /v1/urls?url=<escaped URL>")
	}
	ok, err := s.UnregisterURL(raw)
	if err != nil {
		return nil, asHTTPError(err)
	}
	if !ok {
		return nil, errorf(http.StatusNotFound, "url %q is not registered on this agent%s", raw, s.heldElsewhere(urlKeyOf(raw)))
	}
	return map[string]bool{"deleted": true}, nil
}

// asHTTPError keeps an error's own status (storage: 503, 507), else 400.
func asHTTPError(err error) error {
	var he *httpError
	if errors.As(err, &he) {
		return err
	}
	return errorf(http.StatusBadRequest, "%v", err)
}

func (s *Server) getServices(r *http.Request) (any, error) {
	if r.URL.Query().Has("detail") {
		return map[string][]ServiceSummary{"services": s.serviceSummaries()}, nil
	}
	return map[string][]string{"services": nonNil(s.table.Services())}, nil
}

func (s *Server) getService(r *http.Request) (any, error) {
	iface := r.PathValue("interface")
	category := r.URL.Query().Get("category")
	if category == "" {
		category = "providers"
	}
	if err := checkURLComponent("category", category); err != nil {
		return nil, errorf(http.StatusBadRequest, "%v", err)
	}
	urls := s.table.URLs(iface, category)
	if len(urls) == 0 && !contains(s.table.Services(), iface) {
		return nil, errorf(http.StatusNotFound, "no URLs registered for interface %q", iface)
	}
	return map[string][]string{"urls": nonNil(urls)}, nil
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
