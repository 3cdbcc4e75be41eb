package routes

import (
	"cmp"
	"slices"
	"sort"
	"time"
	"unique"
)

// QueueData is a topic's queues on one broker name, as RocketMQ clients read it.
type QueueData struct {
	BrokerName     string `json:"brokerName"`
	ReadQueueNums  int    `json:"readQueueNums"`
	WriteQueueNums int    `json:"writeQueueNums"`
	Perm           int    `json:"perm"`
	TopicSysFlag   int    `json:"topicSysFlag"`
}

// BrokerData is one broker name's addresses by broker id (0 = master).
type BrokerData struct {
	Cluster     string           `json:"cluster"`
	BrokerName  string           `json:"brokerName"`
	BrokerAddrs map[int64]string `json:"brokerAddrs"`
	// ZoneName and EnableActingMaster come from the group's latest
	// registration (the member record with the highest Stamp).
	ZoneName           string `json:"zoneName,omitempty"`
	EnableActingMaster bool   `json:"enableActingMaster,omitempty"`
	// Origins are the agents the addresses were registered on, by broker
	// id, so callers can order brokers by their distance to this agent.
	Origins map[int64]string `json:"-"`
}

// Origin is the agent that registered the master, or else the lowest id.
func (b BrokerData) Origin() string {
	if o, ok := b.Origins[0]; ok {
		return o
	}
	best := int64(-1)
	for id := range b.Origins {
		if best < 0 || id < best {
			best = id
		}
	}
	return b.Origins[best]
}

// TopicRoute is RocketMQ's TopicRouteData: where a topic's queues live.
type TopicRoute struct {
	QueueDatas  []QueueData  `json:"queueDatas"`
	BrokerDatas []BrokerData `json:"brokerDatas"`
}

// NearestFirst orders the route's brokers, and their queue data, by the
// round trip rtt estimates to the agent each registered on (its Origin):
// nearest first, those whose distance rtt does not know yet last, ties
// in their order (by name).
func (r *TopicRoute) NearestFirst(rtt func(origin string) (time.Duration, bool)) {
	dist := make(map[string]time.Duration, len(r.BrokerDatas))
	for _, bd := range r.BrokerDatas {
		d, known := rtt(bd.Origin())
		if !known {
			d = time.Duration(1<<63 - 1)
		}
		dist[bd.BrokerName] = d
	}
	slices.SortStableFunc(r.BrokerDatas, func(x, y BrokerData) int {
		return cmp.Compare(dist[x.BrokerName], dist[y.BrokerName])
	})
	slices.SortStableFunc(r.QueueDatas, func(x, y QueueData) int {
		return cmp.Compare(dist[x.BrokerName], dist[y.BrokerName])
	})
}

// ClusterInfo is RocketMQ's cluster table.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData `json:"brokerAddrTable"`
	ClusterAddrTable map[string][]string   `json:"clusterAddrTable"`
}

// viewIndex keeps the secondary indexes views read, updated as records come
// and go, so a query touches only what it answers about. Each maps a name
// to the table's own record pointers, and each pointer to the origin that
// holds it (an interned string, shared by all of its records): a pointer
// key is 8 bytes, where an (origin, key) pair would be 32, for every
// record. Queue records are lists of their entries, which carry their
// origin (queuerec.go): 8 bytes a record, where a map slot would be 24
// and its slack.
type viewIndex struct {
	queues   map[string][]*entry            // topic
	brokers  map[string]map[*Broker]string  // broker name
	urls     map[string]map[*URL]string     // interface
	mappings map[string]map[*Mapping]string // topic
	apps     appIndex                       // applications (apps.go)
	// watch hears which views each link and unlink changes (watch.go).
	watch *watcher
}

func newViewIndex() viewIndex {
	return viewIndex{queues: map[string][]*entry{}, brokers: map[string]map[*Broker]string{}, urls: map[string]map[*URL]string{},
		mappings: map[string]map[*Mapping]string{}, apps: newAppIndex()}
}

func (v *viewIndex) link(e *entry) {
	origin := e.origin.Value()
	v.markRecord(v.watch, e)
	switch r := e.rec.p.(type) {
	case *Broker:
		addTo(v.brokers, r.Name, r, origin)
	case unique.Handle[queueVals]:
		topic := e.topic()
		v.queues[topic] = append(v.queues[topic], e)
	case *URL:
		addTo(v.urls, r.Interface, r, origin)
	case *Mapping:
		addTo(v.mappings, r.Topic, r, origin)
	case *Znode:
		v.linkZnode(r, origin)
	}
}

func (v *viewIndex) unlink(e *entry) {
	switch r := e.rec.p.(type) {
	case *Broker:
		removeFrom(v.brokers, r.Name, r)
	case unique.Handle[queueVals]:
		removeQueue(v.queues, e)
	case *URL:
		removeFrom(v.urls, r.Interface, r)
	case *Mapping:
		removeFrom(v.mappings, r.Topic, r)
	case *Znode:
		v.unlinkZnode(r)
	}
	v.markRecord(v.watch, e)
}

func addTo[T any](m map[string]map[*T]string, name string, k *T, origin string) {
	inner, ok := m[name]
	if !ok {
		inner = map[*T]string{}
		m[name] = inner
	}
	inner[k] = origin
}

func removeFrom[T any](m map[string]map[*T]string, name string, k *T) {
	if inner, ok := m[name]; ok {
		delete(inner, k)
		if len(inner) == 0 {
			delete(m, name)
		}
	}
}

// removeQueue takes q out of its topic's list. Order in the list means
// nothing, so the last record takes its place; a list that has shrunk to
// a quarter of its array moves to a smaller one, so a topic that once had
// many records does not keep their room.
func removeQueue(m map[string][]*entry, q *entry) {
	topic := q.topic()
	recs := m[topic]
	for i, r := range recs {
		if r != q {
			continue
		}
		last := len(recs) - 1
		recs[i] = recs[last]
		recs[last] = nil
		recs = recs[:last]
		switch {
		case len(recs) == 0:
			delete(m, topic)
		case cap(recs) > 8 && len(recs) <= cap(recs)/4:
			m[topic] = append([]*entry(nil), recs...)
		default:
			m[topic] = recs
		}
		return
	}
}

// Every view below answers what Java computes from its one table, from
// the records of every agent, alike on every agent: per broker id the
// address with the higher stateVersion, then the newest registration
// (brokerBefore, recency.go), per (broker name, topic) the queue data that
// outranks the others (queueVals.outranks: the master's, then the later
// write), then the lower origin name between writes of one stamp.

// masterFirst orders broker ids: the master (0), then the lowest.
func masterFirst(a, b int64) bool {
	if (a == 0) != (b == 0) {
		return a == 0
	}
	return a < b
}

// brokerData builds one broker name's view.
func (v *viewIndex) brokerData(name string) (BrokerData, bool) {
	regs := v.brokers[name]
	if len(regs) == 0 {
		return BrokerData{}, false
	}
	byID := map[int64]*Broker{}
	for b, origin := range regs {
		if p, ok := byID[b.ID]; ok && !brokerBefore(b, origin, p, regs[p]) {
			continue
		}
		byID[b.ID] = b
	}
	bd := BrokerData{BrokerName: name, BrokerAddrs: map[int64]string{}, Origins: map[int64]string{}}
	var first, latest *Broker
	for id, b := range byID {
		bd.BrokerAddrs[id] = b.Addr
		bd.Origins[id] = regs[b]
		// The cluster comes from the master, else the lowest id.
		if first == nil || masterFirst(id, first.ID) {
			first = b
		}
		if latest == nil || b.Stamp > latest.Stamp || b.Stamp == latest.Stamp && id < latest.ID {
			latest = b
		}
	}
	bd.Cluster = first.Cluster
	bd.ZoneName, bd.EnableActingMaster = latest.Zone, latest.ActingMaster
	return bd, true
}

// bestQueues picks, among one topic's queue records, the one routes
// answer with per broker name (queueRec.before).
func bestQueues(recs []*entry) map[string]*entry {
	best := make(map[string]*entry, len(recs))
	for _, q := range recs {
		name := q.brokerName()
		if prev, dup := best[name]; dup && !q.before(prev) {
			continue
		}
		best[name] = q
	}
	return best
}

// TopicRoute answers where topic's queues are. Queue data whose broker is
// not registered is left out, as the NameServer does; ok is false when
// nothing remains. Lists are sorted by broker name.
func (t *Table) TopicRoute(topic string) (TopicRoute, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var route TopicRoute
	for name, q := range bestQueues(t.views.queues[topic]) {
		bd, ok := t.views.brokerData(name)
		if !ok {
			continue
		}
		v := q.vals().Value()
		route.QueueDatas = append(route.QueueDatas, QueueData{BrokerName: name, ReadQueueNums: v.ReadQueueNums,
			WriteQueueNums: v.WriteQueueNums, Perm: v.Perm, TopicSysFlag: v.TopicSysFlag})
		route.BrokerDatas = append(route.BrokerDatas, bd)
	}
	if len(route.QueueDatas) == 0 {
		return TopicRoute{}, false
	}
	sort.Slice(route.QueueDatas, func(i, j int) bool { return route.QueueDatas[i].BrokerName < route.QueueDatas[j].BrokerName })
	sort.Slice(route.BrokerDatas, func(i, j int) bool { return route.BrokerDatas[i].BrokerName < route.BrokerDatas[j].BrokerName })
	return route, true
}

// Topics lists every topic with queue data, sorted.
func (t *Table) Topics() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return sortedKeys(t.views.queues)
}

// Queues lists every topic's queue data on one broker name, one entry per
// topic (the one routes answer with), sorted by topic.
func (t *Table) Queues(brokerName string) []Queue {
	picks := t.QueuePicks(brokerName)
	out := make([]Queue, len(picks))
	for i, p := range picks {
		out[i] = p.Queue
	}
	return out
}

// QueuePick is the queue data routes answer with for one (broker name,
// topic), and the agent that holds it.
type QueuePick struct {
	Queue
	Origin string
}

// QueuePicks is Queues with each record's origin. It reads every topic's
// records: callers that know which topics changed use QueuePick.
func (t *Table) QueuePicks(brokerName string) []QueuePick {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []QueuePick
	for _, recs := range t.views.queues {
		if p, ok := pickOf(recs, brokerName); ok {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out
}

// QueuePick is the queue data routes answer with for one broker name and
// topic, ok false when no agent holds any.
func (t *Table) QueuePick(brokerName, topic string) (QueuePick, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return pickOf(t.views.queues[topic], brokerName)
}

func pickOf(recs []*entry, brokerName string) (QueuePick, bool) {
	var best *entry
	for _, q := range recs {
		if q.onBroker(brokerName) && (best == nil || q.before(best)) {
			best = q
		}
	}
	if best == nil {
		return QueuePick{}, false
	}
	return QueuePick{Queue: *best.queue(), Origin: best.origin.Value()}, true
}

// Clusters answers the cluster table: every broker name's addresses, and
// which broker names each cluster has.
func (t *Table) Clusters() ClusterInfo {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ci := ClusterInfo{BrokerAddrTable: map[string]BrokerData{}, ClusterAddrTable: map[string][]string{}}
	for name := range t.views.brokers {
		bd, _ := t.views.brokerData(name)
		ci.BrokerAddrTable[name] = bd
		ci.ClusterAddrTable[bd.Cluster] = append(ci.ClusterAddrTable[bd.Cluster], name)
	}
	for _, names := range ci.ClusterAddrTable {
		sort.Strings(names)
	}
	return ci
}

// Services lists every interface with a registered URL, sorted.
func (t *Table) Services() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return sortedKeys(t.views.urls)
}

// URLs lists the distinct URLs of one interface in one category, sorted.
// An empty category means every category.
func (t *Table) URLs(iface, category string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for u := range t.views.urls[iface] {
		if (category == "" || u.Category == category) && !seen[u.URL] {
			seen[u.URL] = true
			out = append(out, u.URL)
		}
	}
	sort.Strings(out)
	return out
}

// URLCategories lists the categories in which one interface has a URL,
// sorted (Dubbo's Redis registry keeps one hash per category).
func (t *Table) URLCategories(iface string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for u := range t.views.urls[iface] {
		if !seen[u.Category] {
			seen[u.Category] = true
			out = append(out, u.Category)
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Brokers lists the broker records registered under one broker name, sorted
// by id then origin.
func (t *Table) Brokers(name string) []Broker {
	t.mu.RLock()
	defer t.mu.RUnlock()
	type withOrigin struct {
		b      Broker
		origin string
	}
	var all []withOrigin
	for b, origin := range t.views.brokers[name] {
		all = append(all, withOrigin{*b, origin})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].b.ID != all[j].b.ID {
			return all[i].b.ID < all[j].b.ID
		}
		return all[i].origin < all[j].origin
	})
	out := make([]Broker, len(all))
	for i, w := range all {
		out[i] = w.b
	}
	return out
}

// BrokerHolders lists, sorted, the agents that hold a broker record of
// name: every agent a change to the group's records must reach, since only
// an origin changes its own (BrokerData.Origins names one per id).
func (t *Table) BrokerHolders(name string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for _, origin := range t.views.brokers[name] {
		if !seen[origin] {
			seen[origin] = true
			out = append(out, origin)
		}
	}
	sort.Strings(out)
	return out
}
