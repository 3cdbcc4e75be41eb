package nacos

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// The Nacos 1.x open API on the HTTP port, for what operators and 1.x
// clients call (Nacos' naming InstanceController, ServiceController and
// config ConfigController under /nacos/v1). Parameters come from the query
// or a form body, as Nacos reads them. Ephemeral instances registered here
// are held by their beats: each beat keeps the instance Config.BeatTimeout
// (30 s, Nacos' ipDeleteTimeout) longer, and the answer tells the client to beat
// every BeatInterval (5 s).

// beat is one instance registered over HTTP, held until its deadline.
type beat struct {
	key      string
	deadline time.Time
}

func (s *Server) httpHandler() http.Handler {
	mux := http.NewServeMux()
	handle := func(route string, h http.HandlerFunc) { mux.HandleFunc(route, s.counted(route, h)) }
	handle("POST /nacos/v1/ns/instance", s.httpRegister)
	handle("PUT /nacos/v1/ns/instance", s.httpRegister)
	handle("GET /nacos/v1/ns/operator/metrics", s.httpOperatorMetrics)
	handle("DELETE /nacos/v1/ns/instance", s.httpDeregister)
	handle("GET /nacos/v1/ns/instance", s.httpInstance)
	handle("GET /nacos/v1/ns/instance/list", s.httpList)
	handle("PUT /nacos/v1/ns/instance/beat", s.httpBeat)
	handle("GET /nacos/v1/ns/service/list", s.httpServiceList)
	handle("GET /nacos/v1/cs/configs", s.httpConfigGet)
	handle("POST /nacos/v1/cs/configs", s.httpConfigPublish)
	handle("DELETE /nacos/v1/cs/configs", s.httpConfigDelete)
	handle("POST /nacos/v1/cs/configs/listener", s.httpListen)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := int64(MaxConfigContent + 16<<10)
		if r.URL.Path == "/nacos/v1/cs/configs/listener" {
			limit = maxListenBody
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		mux.ServeHTTP(w, r)
	})
}

func httpError(w http.ResponseWriter, code int, err error) {
	if ce, ok := err.(*codedError); ok && ce.code == nacoswire.ErrInvalidParam {
		code = http.StatusBadRequest
	}
	http.Error(w, "caused: "+err.Error(), code)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// formService reads the service a request names; a bad name is the
// client's error (400), whatever the handler answers for failures.
func formService(r *http.Request) (service, error) {
	sv, err := newService(r.FormValue("namespaceId"), r.FormValue("groupName"), r.FormValue("serviceName"))
	if err != nil {
		return sv, invalid(err)
	}
	return sv, nil
}

func (s *Server) httpRegister(w http.ResponseWriter, r *http.Request) {
	sv, err := formService(r)
	if err == nil {
		var in nacoswire.Instance
		if in, err = formInstance(r); err == nil {
			err = s.registerHTTP(sv, in)
		}
	}
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, err)
		return
	}
	w.Write([]byte("ok"))
}

// registerHTTP records an instance registered over HTTP: persistent ones as
// rules, ephemeral ones held by beats.
func (s *Server) registerHTTP(sv service, in nacoswire.Instance) error {
	rec, err := sv.record(in, !in.Ephemeral)
	if err != nil {
		return invalid(err)
	}
	return saved(s.registerHTTPLocked(sv, in, rec))
}

func (s *Server) registerHTTPLocked(sv service, in nacoswire.Instance, rec routes.Record) (lease.Saving, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.checkKind(sv, !in.Ephemeral, false); err != nil { // naming.go
		return lease.Saving{}, err
	}
	rec = s.settle(sv, in, !in.Ephemeral, rec) // apps.go
	if !in.Ephemeral {
		return lease.Saving{}, s.applyRules([]routes.Record{rec}, without(s.persistentKeys(sv, in), []routes.Record{rec}))
	}
	id := identity(sv, in.IP, in.Port, in.ClusterName)
	s.mu.Lock()
	b := s.beats[id]
	full := b == nil && len(s.beats) >= s.cfg.MaxConns
	s.mu.Unlock()
	if full {
		return lease.Saving{}, &codedError{nacoswire.ErrOverThreshold, "too many instances registered over HTTP"}
	}
	var drops []string
	if b != nil && b.key != rec.Key() {
		drops = append(drops, b.key)
	}
	deadline := time.Now().Add(s.cfg.BeatTimeout)
	sav, err := s.hold(beatHolder(id), []routes.Record{rec}, drops, deadline, holdState{Kind: kindBeat, Identity: id})
	if err != nil {
		return sav, err
	}
	s.mu.Lock()
	if b == nil {
		b = &beat{}
		s.beats[id] = b
	}
	b.key, b.deadline = rec.Key(), deadline
	s.mu.Unlock()
	return sav, nil
}

func (s *Server) httpDeregister(w http.ResponseWriter, r *http.Request) {
	sv, err := formService(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	in, err := formInstance(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	if err := saved(s.deregisterHTTP(sv, in)); err != nil {
		httpError(w, http.StatusServiceUnavailable, err)
		return
	}
	w.Write([]byte("ok"))
}

func (s *Server) deregisterHTTP(sv service, in nacoswire.Instance) (lease.Saving, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if !in.Ephemeral {
		if keys := s.persistentKeys(sv, in); len(keys) > 0 {
			return lease.Saving{}, s.applyRules(nil, keys)
		}
		return lease.Saving{}, nil
	}
	return s.dropBeat(identity(sv, in.IP, in.Port, in.ClusterName), false)
}

// dropBeat lets go of an HTTP instance (letGo; gone: its beats stopped);
// an error (the data dir cannot save it) keeps it. writeMu held.
func (s *Server) dropBeat(id string, gone bool) (lease.Saving, error) {
	sv, err := s.letGo(beatHolder(id), gone)
	if err != nil {
		return sv, err
	}
	s.mu.Lock()
	delete(s.beats, id)
	s.mu.Unlock()
	return sv, nil
}

// httpBeat renews an HTTP instance (Nacos' InstanceController.beat): code
// 10200 when held, 20404 when unknown, so the client registers it again.
func (s *Server) httpBeat(w http.ResponseWriter, r *http.Request) {
	sv, err := formService(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	ip, port, cluster := r.FormValue("ip"), r.FormValue("port"), r.FormValue("clusterName")
	if raw := r.FormValue("beat"); raw != "" {
		var b struct {
			IP      string `json:"ip"`
			Port    int    `json:"port"`
			Cluster string `json:"cluster"`
		}
		if err := json.Unmarshal([]byte(raw), &b); err != nil {
			httpError(w, http.StatusBadRequest, invalid(fmt.Errorf("beat is not JSON: %v", err)))
			return
		}
		ip, port, cluster = b.IP, strconv.Itoa(b.Port), b.Cluster
	}
	p, _ := strconv.Atoi(port)
	id := identity(sv, ip, p, cluster)
	s.writeMu.Lock()
	s.mu.Lock()
	b := s.beats[id]
	deadline := time.Now().Add(s.cfg.BeatTimeout)
	if b != nil {
		b.deadline = deadline
	}
	s.mu.Unlock()
	if b != nil {
		if err := s.renew(beatHolder(id), deadline); err != nil {
			s.log.Warn("saving a beat's deadline failed; a restart may expire the instance early", "err", err)
		}
	}
	s.writeMu.Unlock()
	code := 10200
	if b == nil {
		code = 20404
	}
	writeJSON(w, map[string]any{"clientBeatInterval": BeatInterval.Milliseconds(), "code": code, "lightBeatEnabled": true})
}

// beatLoop withdraws HTTP instances whose beats stopped.
func (s *Server) beatLoop() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.writeMu.Lock()
			s.mu.Lock()
			var expired []string
			for id, b := range s.beats {
				if now.After(b.deadline) {
					expired = append(expired, id)
				}
			}
			s.mu.Unlock()
			for _, id := range expired {
				if _, err := s.dropBeat(id, true); err != nil {
					s.log.Error("withdrawing an instance whose beats stopped failed: the data dir cannot save it; retrying", "err", err)
				}
			}
			s.writeMu.Unlock()
		}
	}
}

func (s *Server) httpInstance(w http.ResponseWriter, r *http.Request) {
	sv, err := formService(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	port, _ := strconv.Atoi(r.FormValue("port"))
	for _, h := range s.hosts(sv, r.FormValue("cluster")+r.FormValue("clusterName")) {
		if h.IP == r.FormValue("ip") && h.Port == port {
			writeJSON(w, map[string]any{"service": sv.group + "@@" + sv.name, "ip": h.IP, "port": h.Port,
				"clusterName": h.ClusterName, "weight": h.Weight, "healthy": h.Healthy, "instanceId": h.InstanceID,
				"metadata": h.Metadata})
			return
		}
	}
	httpError(w, http.StatusNotFound, errors.New("no ip "+r.FormValue("ip")+" port "+r.FormValue("port")+" in service "+sv.name))
}

func (s *Server) httpList(w http.ResponseWriter, r *http.Request) {
	sv, err := formService(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	info := s.serviceInfo(sv, r.FormValue("clusters"))
	info.Name = sv.group + "@@" + sv.name // 1.x names services with their group
	if healthyOnly, _ := strconv.ParseBool(r.FormValue("healthyOnly")); healthyOnly {
		kept := info.Hosts[:0]
		for _, h := range info.Hosts {
			if h.Healthy && h.Enabled {
				kept = append(kept, h)
			}
		}
		info.Hosts = kept
	}
	writeJSON(w, info)
}

func (s *Server) httpServiceList(w http.ResponseWriter, r *http.Request) {
	atoi := func(name string, def int) int {
		if n, err := strconv.Atoi(r.FormValue(name)); err == nil {
			return n
		}
		return def
	}
	p, err := s.servicePage(r.FormValue("namespaceId"), r.FormValue("groupName"), atoi("pageNo", 1), atoi("pageSize", 10))
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, map[string]any{"count": p.count, "doms": p.page})
}
