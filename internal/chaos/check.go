package chaos

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/namecast/namecast/gossip"
	"github.com/namecast/namecast/routes"
)

// Replica is one running node as the checker reads it.
type Replica struct {
	Name    string
	Table   *routes.Table
	Members func() []gossip.Member
}

// maxReported bounds the differences one failed check lists.
const maxReported = 12

// Check reports nil when the replicas have converged on exactly what the
// model expects at now:
//
//  1. the replicas are the nodes the model has running, and each sees
//     exactly those as alive members;
//  2. their digests are identical (origins with no history left aside:
//     whether a replica has heard of an idle node is not state);
//  3. each holds exactly the expected records: every unexpired
//     registration of a running node, every settled rule, and nothing
//     else, in particular nothing of a node that is down. Unsettled rules
//     may be there or not.
func Check(m *Model, replicas []Replica, now time.Time) error {
	want := m.Expected(now)
	if err := checkMembers(want.Live, replicas); err != nil {
		return err
	}
	if err := checkDigests(replicas); err != nil {
		return err
	}
	var problems []string
	for _, r := range replicas {
		problems = append(problems, diffRecords(r, want)...)
	}
	if len(problems) > 0 {
		return report(fmt.Sprintf("%d record differences", len(problems)), problems)
	}
	return nil
}

func checkMembers(live []string, replicas []Replica) error {
	var names []string
	for _, r := range replicas {
		names = append(names, r.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, live) {
		return fmt.Errorf("replicas %v are not the nodes the model has running, %v", names, live)
	}
	for _, r := range replicas {
		var alive []string
		status := map[string]gossip.Status{}
		for _, mem := range r.Members() {
			status[mem.Name] = mem.Status
			if mem.Status == gossip.StatusAlive {
				alive = append(alive, mem.Name)
			}
		}
		slices.Sort(alive)
		if !slices.Equal(alive, live) {
			var missing []string
			for _, name := range live {
				if st := status[name]; st != gossip.StatusAlive {
					missing = append(missing, fmt.Sprintf("%s is %q", name, st))
				}
			}
			return fmt.Errorf("%s sees %v alive, want %v (%s)", r.Name, alive, live, strings.Join(missing, ", "))
		}
	}
	return nil
}

func checkDigests(replicas []Replica) error {
	if len(replicas) == 0 {
		return nil
	}
	first := eventful(replicas[0].Table.Digest())
	var problems []string
	for _, r := range replicas[1:] {
		d := eventful(r.Table.Digest())
		for _, o := range slices.Sorted(maps.Keys(union(first, d))) {
			if first[o] != d[o] {
				problems = append(problems, fmt.Sprintf("origin %s: %s holds %+v, %s holds %+v", o, replicas[0].Name, first[o], r.Name, d[o]))
			}
		}
	}
	if len(problems) > 0 {
		return report("digests differ", problems)
	}
	return nil
}

// eventful drops digest entries of origins nothing ever happened to.
func eventful(d routes.Digest) routes.Digest {
	for o, e := range d {
		if e.Seq == 0 {
			delete(d, o)
		}
	}
	return d
}

func union[V any](a, b map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// diffRecords lists how one replica's records differ from want.
func diffRecords(r Replica, want Expected) []string {
	var out []string
	have := map[string]map[string]routes.Record{}
	for _, o := range r.Table.Origins() {
		s, _ := r.Table.Snapshot(o)
		recs := map[string]routes.Record{}
		for _, op := range s.Ops {
			if op.Rec != nil {
				recs[op.Key] = *op.Rec
			}
		}
		if len(recs) > 0 {
			have[o] = recs
		}
	}
	for _, o := range slices.Sorted(maps.Keys(union(have, want.Records))) {
		exp, expOK := want.Records[o]
		got := have[o]
		if !expOK {
			out = append(out, fmt.Sprintf("%s holds %d records of %s, which is down (e.g. %s)", r.Name, len(got), o, anyKey(got)))
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(union(exp, got))) {
			e, inExp := exp[k]
			g, inGot := got[k]
			switch {
			case o == routes.RulesOrigin && !inExp && inGot && isUnsettled(want, k, g):
			case inExp && !inGot:
				out = append(out, fmt.Sprintf("%s lost %s of %s", r.Name, k, o))
			case !inExp && inGot:
				out = append(out, fmt.Sprintf("%s holds %s of %s, which the model has withdrawn, expired or never made", r.Name, k, o))
			case fmt.Sprint(recordValue(e)) != fmt.Sprint(recordValue(g)):
				out = append(out, fmt.Sprintf("%s holds %s of %s as %v, want %v", r.Name, k, o, recordValue(g), recordValue(e)))
			}
		}
	}
	return out
}

func isUnsettled(want Expected, key string, got routes.Record) bool {
	u, ok := want.Unsettled[key]
	return ok && fmt.Sprint(recordValue(u)) == fmt.Sprint(recordValue(got))
}

// recordValue is the record's one set field, dereferenced for printing
// and comparing.
func recordValue(r routes.Record) any {
	switch {
	case r.Broker != nil:
		b := *r.Broker
		b.Stamp = 0 // the origin's table stamps it (routes' recency): logical time the model cannot know
		return b
	case r.Queue != nil:
		q := *r.Queue
		q.Stamp = 0 // stamped like a broker record
		return q
	case r.URL != nil:
		return *r.URL
	case r.KV != nil:
		return *r.KV
	}
	return nil
}

func anyKey(m map[string]routes.Record) string {
	for k := range m {
		return k
	}
	return ""
}

func report(title string, problems []string) error {
	n := len(problems)
	if n > maxReported {
		problems = append(problems[:maxReported], fmt.Sprintf("... and %d more", n-maxReported))
	}
	return errors.New(title + ":\n  " + strings.Join(problems, "\n  "))
}
