package nacos

import (
	"strings"
	"sync"
	"time"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// Pushes. The table tells the door the key of every record that changes,
// from any door and any agent (OnChange); the door notes the interface or
// config it belongs to and the push loop, outside the table's lock,
// recomputes each affected subscription and sends NotifySubscriberRequest
// when its instances changed, and ConfigChangeNotifyRequest to each
// connection listening to a changed config.

// subscription is one SubscribeServiceRequest of a connection.
type subscription struct {
	sv       service
	clusters string
	checksum string // of the last ServiceInfo sent
}

func subKey(sv service, clusters string) string {
	return sv.ns + "\x00" + sv.group + "\x00" + sv.name + "\x00" + clusters
}

type pushState struct {
	mu      sync.Mutex
	ifaces  map[string]bool // interfaces whose URLs changed
	configs map[string]bool // config keys that changed
	wake    chan struct{}
	// polled and pollWake are the config keys that changed for the 1.x
	// long polls (listener.go), woken by their own loop so that a slow
	// gRPC push round never delays them.
	polled   map[string]bool
	pollWake chan struct{}
}

func (p *pushState) init() {
	p.ifaces, p.configs, p.wake = map[string]bool{}, map[string]bool{}, make(chan struct{}, 1)
	p.polled, p.pollWake = map[string]bool{}, make(chan struct{}, 1)
}

var configKeyPrefix = routes.KVPrefix(configNamespace)

// changed is the table's OnChange hook: it only notes the key.
func (p *pushState) changed(key string) {
	var note func()
	isConfig := false
	if iface, _, _, ok := routes.ParseURLKey(key); ok {
		note = func() { p.ifaces[iface] = true }
	} else if rest, ok := strings.CutPrefix(key, instanceMetaPrefix); ok {
		sv, ok := metaService(rest) // update.go
		if !ok {
			return
		}
		iface, _ := sv.urlKeys()
		note = func() { p.ifaces[iface] = true }
	} else if rest, ok := strings.CutPrefix(key, configKeyPrefix); ok {
		note = func() { p.configs[rest], p.polled[rest] = true, true }
		isConfig = true
	} else if path, ok := routes.ZnodePathOfKey(key); ok {
		app, config := appChange(path) // apps.go
		switch {
		case app != "":
			note = func() { p.ifaces[app] = true }
		case config != "":
			note = func() { p.configs[config], p.polled[config] = true, true }
			isConfig = true
		default:
			return
		}
	} else {
		return
	}
	p.mu.Lock()
	note()
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	if isConfig {
		select {
		case p.pollWake <- struct{}{}:
		default:
		}
	}
}

// takePolled takes the config keys changed since the last call.
func (p *pushState) takePolled() map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	polled := p.polled
	p.polled = map[string]bool{}
	return polled
}

func (p *pushState) take() (ifaces, configs map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ifaces, configs = p.ifaces, p.configs
	p.ifaces, p.configs = map[string]bool{}, map[string]bool{}
	return ifaces, configs
}

func (s *Server) pushLoop() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.push.wake:
		}
		ifaces, configs := s.push.take()
		s.pushRound(ifaces, configs)
	}
}

type pushJob struct {
	what string // for logs
	st   *stream
	conn string
	typ  string // the pushed request's type, for metrics
	send func(*stream) error
}

// pushRound sends what changed to whoever subscribed to it.
func (s *Server) pushRound(ifaces, configs map[string]bool) {
	type target struct {
		c   *client
		sub *subscription
	}
	var subs []target
	var jobs []pushJob
	s.mu.Lock()
	for _, c := range s.clients {
		if c.gone {
			continue
		}
		for _, sub := range c.subs {
			if iface, _ := sub.sv.urlKeys(); ifaces[iface] {
				subs = append(subs, target{c, sub})
			}
		}
		for key, id := range c.listens {
			if configs[key] {
				jobs = append(jobs, pushJob{what: "config " + key, typ: nacoswire.TypeConfigChangeNotify, st: c.st, conn: c.id, send: func(st *stream) error {
					req := &nacoswire.ConfigChangeNotifyRequest{ConfigRequest: nacoswire.ConfigRequest{
						Request: nacoswire.Request{Module: "config"}, DataID: id.dataID, Group: id.group, Tenant: id.tenant}}
					return st.pushRequest(nacoswire.TypeConfigChangeNotify, func(rid string) { req.RequestID = rid }, req)
				}})
			}
		}
	}
	s.mu.Unlock()
	s.udpRound(ifaces) // udp.go
	for _, t := range subs {
		info := s.serviceInfo(t.sub.sv, t.sub.clusters)
		s.mu.Lock()
		stale := t.sub.checksum == info.Checksum
		t.sub.checksum = info.Checksum
		s.mu.Unlock()
		if stale {
			continue
		}
		sv := t.sub.sv
		jobs = append(jobs, pushJob{what: "service " + t.sub.sv.name, typ: nacoswire.TypeNotifySubscriber, st: t.c.st, conn: t.c.id, send: func(st *stream) error {
			req := &nacoswire.NotifySubscriberRequest{NamingRequest: nacoswire.NamingRequest{
				Request: nacoswire.Request{Module: "naming"}, Namespace: sv.ns, ServiceName: sv.name, GroupName: sv.group},
				ServiceInfo: info}
			return st.pushRequest(nacoswire.TypeNotifySubscriber, func(rid string) { req.RequestID = rid }, req)
		}})
	}
	// One goroutine per connection, so a slow client delays only itself
	// (each send is bounded by WriteTimeout).
	byConn := map[string][]pushJob{}
	for _, j := range jobs {
		byConn[j.conn] = append(byConn[j.conn], j)
	}
	var wg sync.WaitGroup
	for conn, js := range byConn {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, j := range js {
				err := j.send(j.st)
				s.countPush(j.typ, err)
				if err != nil {
					s.log.Debug("nacos push failed", "conn", conn, "err", err)
					return
				}
				s.log.Debug("nacos push sent", "conn", conn, "what", j.what)
			}
		}()
	}
	wg.Wait()
}

// nextRefTime is a ServiceInfo's lastRefTime: milliseconds, strictly
// increasing, since clients drop a push whose lastRefTime is not newer
// than what they hold.
func (s *Server) nextRefTime() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refTime = max(time.Now().UnixMilli(), s.refTime+1)
	return s.refTime
}

func (s *Server) subscribeService(c *client, body []byte) (any, error) {
	var req nacoswire.SubscribeServiceRequest
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	sv, err := newService(req.Namespace, req.GroupName, req.ServiceName)
	if err != nil {
		return nil, invalid(err)
	}
	info := s.serviceInfo(sv, req.Clusters)
	key := subKey(sv, req.Clusters)
	s.mu.Lock()
	if c.subs != nil {
		if req.Subscribe {
			if len(c.subs) >= MaxSubscriptions {
				s.mu.Unlock()
				return nil, &codedError{nacoswire.ErrOverThreshold, "too many subscriptions on one connection"}
			}
			c.subs[key] = &subscription{sv: sv, clusters: req.Clusters, checksum: info.Checksum}
		} else {
			delete(c.subs, key)
		}
	}
	s.mu.Unlock()
	// A change between computing info and storing the subscription was
	// seen by no push round: look again.
	s.noteService(sv)
	return &nacoswire.ServiceInfoResponse{Response: nacoswire.OK(), ServiceInfo: info}, nil
}

// MaxSubscriptions bounds one connection's subscriptions and config listens.
const MaxSubscriptions = 10000

// noteService has the push loop look at sv's subscribers again.
func (s *Server) noteService(sv service) {
	iface, _ := sv.urlKeys()
	s.push.changed(routes.URLPrefix(iface, "x"))
}
