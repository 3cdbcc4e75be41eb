package httpapi

import (
	"net/http"

	"github.com/namecast/namecast/routes"
)

// The views the API's reads depend on, for blocking queries (see
// routes/watch.go): each names the part of the table its answer shows, so
// a watch on one topic or service wakes for its own changes only.

// wholeTable is the view of answers that depend on anything: the global
// index.
func wholeTable(*http.Request) routes.Watch { return nil }

func (s *Server) membersView(*http.Request) routes.Watch  { return routes.WatchMembers }
func (s *Server) clustersView(*http.Request) routes.Watch { return routes.WatchClusters }

// With ?detail the lists carry queue counts and URL counts (summaries.go),
// which change without the set of names changing: they watch the whole
// table.
func (s *Server) topicsView(r *http.Request) routes.Watch {
	if r.URL.Query().Has("detail") {
		return wholeTable(r)
	}
	return routes.WatchTopics
}

func (s *Server) servicesView(r *http.Request) routes.Watch {
	if r.URL.Query().Has("detail") {
		return wholeTable(r)
	}
	return routes.WatchServices
}

func (s *Server) topicView(r *http.Request) routes.Watch {
	return s.table.WatchTopicRoute(r.PathValue("topic"))
}

func (s *Server) serviceView(r *http.Request) routes.Watch {
	return routes.WatchService(r.PathValue("interface"), serviceCategory(r))
}

// serviceCategory is the category a service query asks for.
func serviceCategory(r *http.Request) string {
	if c := r.URL.Query().Get("category"); c != "" {
		return c
	}
	return "providers"
}
