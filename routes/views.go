package routes

import (
	"sort"
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

// ClusterInfo is RocketMQ's cluster table.
type ClusterInfo struct {
	BrokerAddrTable  map[string]BrokerData `json:"brokerAddrTable"`
	ClusterAddrTable map[string][]string   `json:"clusterAddrTable"`
}

// viewIndex keeps the secondary indexes views read, updated as records come
// and go, so a query touches only what it answers about. Each maps a name
// to the table's own record pointers, and each pointer to the origin that
// holds it (an interned string, shared by all of its records): a pointer
// key is 8 bytes where an (origin, key) pair was 32, for every record.
type viewIndex struct {
	queues  map[string]map[*Queue]string  // topic
	brokers map[string]map[*Broker]string // broker name
	urls    map[string]map[*URL]string    // interface
	// watch hears which views each link and unlink changes (watch.go).
	watch *watcher
}

func newViewIndex() viewIndex {
	return viewIndex{queues: map[string]map[*Queue]string{}, brokers: map[string]map[*Broker]string{}, urls: map[string]map[*URL]string{}}
}

func (v *viewIndex) link(origin string, s stored) {
	origin = unique.Make(origin).Value()
	v.markRecord(v.watch, s)
	switch r := s.p.(type) {
	case *Broker:
		addTo(v.brokers, r.Name, r, origin)
	case *Queue:
		addTo(v.queues, r.Topic, r, origin)
	case *URL:
		addTo(v.urls, r.Interface, r, origin)
	}
}

func (v *viewIndex) unlink(s stored) {
	switch r := s.p.(type) {
	case *Broker:
		removeFrom(v.brokers, r.Name, r)
	case *Queue:
		removeFrom(v.queues, r.Topic, r)
	case *URL:
		removeFrom(v.urls, r.Interface, r)
	}
	v.markRecord(v.watch, s)
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

// brokerData builds one broker name's view. When two origins register the
// same id (a broker moved between agents and the old one is not yet known
// dead), the lowest origin name wins so every replica answers alike.
func (v *viewIndex) brokerData(name string) (BrokerData, bool) {
	regs := v.brokers[name]
	if len(regs) == 0 {
		return BrokerData{}, false
	}
	bd := BrokerData{BrokerName: name, BrokerAddrs: map[int64]string{}, Origins: map[int64]string{}}
	first := int64(-1)
	for b, origin := range regs {
		if o, taken := bd.Origins[b.ID]; taken && o < origin {
			continue
		}
		bd.BrokerAddrs[b.ID] = b.Addr
		bd.Origins[b.ID] = origin
		if first < 0 || b.ID < first {
			first = b.ID
		}
	}
	// The cluster comes from the lowest id, the master when there is one.
	for b, origin := range regs {
		if b.ID == first && bd.Origins[first] == origin {
			bd.Cluster = b.Cluster
		}
	}
	return bd, true
}

// TopicRoute answers where topic's queues are. Queue data whose broker is
// not registered is left out, as the NameServer does; ok is false when
// nothing remains. Lists are sorted by broker name.
func (t *Table) TopicRoute(topic string) (TopicRoute, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	type pick struct {
		q      *Queue
		origin string
	}
	byBroker := map[string]pick{}
	var route TopicRoute
	for q, origin := range t.views.queues[topic] {
		if prev, dup := byBroker[q.BrokerName]; dup && prev.origin < origin {
			continue
		}
		byBroker[q.BrokerName] = pick{q, origin}
	}
	for name, p := range byBroker {
		bd, ok := t.views.brokerData(name)
		if !ok {
			continue
		}
		q := p.q
		route.QueueDatas = append(route.QueueDatas, QueueData{BrokerName: name, ReadQueueNums: q.ReadQueueNums,
			WriteQueueNums: q.WriteQueueNums, Perm: q.Perm, TopicSysFlag: q.TopicSysFlag})
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
// topic, sorted by topic.
func (t *Table) Queues(brokerName string) []Queue {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []Queue
	for _, byRef := range t.views.queues {
		var pick *Queue
		var from string
		for q, origin := range byRef {
			if q.BrokerName == brokerName && (pick == nil || origin < from) {
				pick, from = q, origin
			}
		}
		if pick != nil {
			out = append(out, *pick)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out
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
