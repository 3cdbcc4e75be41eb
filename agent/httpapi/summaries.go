package httpapi

import (
	"github.com/namecast/namecast/routes"
	"net/url"
	"slices"
	"strings"
)

// The list pages' rows: GET /v1/topics?detail and /v1/services?detail
// answer, per name, what a RocketMQ Dashboard's topic list or Dubbo
// Admin's service search shows, so a list answers questions without a
// click per name. Without ?detail the lists stay bare names.

// TopicSummary is one topic of GET /v1/topics?detail: the clusters and
// broker groups that serve it, its queues summed over those groups, and
// the distinct permissions (RocketMQ's bits: 4 read, 2 write, 1 inherit).
type TopicSummary struct {
	Topic       string   `json:"topic"`
	Clusters    []string `json:"clusters"`
	Brokers     []string `json:"brokers"`
	ReadQueues  int      `json:"readQueues"`
	WriteQueues int      `json:"writeQueues"`
	Perms       []int    `json:"perms"`
}

func (s *Server) topicSummaries() []TopicSummary {
	topics := s.table.Topics()
	out := make([]TopicSummary, 0, len(topics))
	for _, t := range topics {
		route, ok := s.table.TopicRoute(t)
		if !ok {
			continue // gone since Topics was read
		}
		sum := TopicSummary{Topic: t, Clusters: []string{}, Brokers: []string{}, Perms: []int{}}
		for _, bd := range route.BrokerDatas {
			sum.Brokers = append(sum.Brokers, bd.BrokerName)
			if !slices.Contains(sum.Clusters, bd.Cluster) {
				sum.Clusters = append(sum.Clusters, bd.Cluster)
			}
		}
		for _, qd := range route.QueueDatas {
			sum.ReadQueues += qd.ReadQueueNums
			sum.WriteQueues += qd.WriteQueueNums
			if !slices.Contains(sum.Perms, qd.Perm) {
				sum.Perms = append(sum.Perms, qd.Perm)
			}
		}
		slices.Sort(sum.Clusters)
		slices.Sort(sum.Perms)
		out = append(out, sum)
	}
	return out
}

// ServiceSummary is one interface of GET /v1/services?detail: how many
// providers and consumers it has (as its service page lists them), the
// Dubbo 3 application instances that export it (application-level
// discovery: AppInstances, of Applications' exporters), and the
// applications and versions their URLs name (sorted, distinct). An
// interface exported only by applications is listed too.
type ServiceSummary struct {
	Interface    string   `json:"interface"`
	Providers    int      `json:"providers"`
	Consumers    int      `json:"consumers"`
	AppInstances int      `json:"appInstances"`
	Applications []string `json:"applications"`
	Versions     []string `json:"versions"`
}

func (s *Server) serviceSummaries() []ServiceSummary {
	exporters := map[string][]routes.App{} // interface → applications that export it
	for _, app := range s.table.Apps() {
		for _, iface := range app.Interfaces {
			exporters[iface] = append(exporters[iface], app)
		}
	}
	services := s.table.Services()
	for iface := range exporters {
		if !slices.Contains(services, iface) {
			services = append(services, iface)
		}
	}
	slices.Sort(services)
	out := make([]ServiceSummary, 0, len(services))
	for _, iface := range services {
		sum := ServiceSummary{Interface: iface, Applications: []string{}, Versions: []string{}}
		for _, c := range []struct {
			category string
			n        *int
		}{{"providers", &sum.Providers}, {"consumers", &sum.Consumers}} {
			for _, u := range s.table.URLs(iface, c.category) {
				*c.n++
				q := urlQuery(u)
				if app := q.Get("application"); app != "" && !slices.Contains(sum.Applications, app) {
					sum.Applications = append(sum.Applications, app)
				}
				if v := q.Get("version"); v != "" && !slices.Contains(sum.Versions, v) {
					sum.Versions = append(sum.Versions, v)
				}
			}
		}
		for _, app := range exporters[iface] {
			sum.AppInstances += app.Instances
			if !slices.Contains(sum.Applications, app.Name) {
				sum.Applications = append(sum.Applications, app.Name)
			}
		}
		slices.Sort(sum.Applications)
		slices.Sort(sum.Versions)
		out = append(out, sum)
	}
	return out
}

// urlQuery is a Dubbo URL's parameters; a malformed query gives what
// could be read.
func urlQuery(raw string) url.Values {
	_, query, _ := strings.Cut(raw, "?")
	q, _ := url.ParseQuery(query)
	return q
}
