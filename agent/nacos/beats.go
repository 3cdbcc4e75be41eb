package nacos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/lease"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
	"github.com/namecast/namecast/routes"
)

// Instances registered over the 1.x HTTP API are held by their beats, as
// Nacos' IpPortBasedClient (InstanceOperatorClientImpl.handleBeat,
// ClientBeatProcessorV2, UnhealthyInstanceChecker,
// ExpiredClientCleaner):
//
//   - Each beat (PUT /nacos/v1/ns/instance/beat) renews the instance: it
//     is withdrawn Config.BeatTimeout (30 s, Nacos' ipDeleteTimeout)
//     after its last beat, and listed unhealthy (out of healthyOnly
//     answers and of what SDKs select) from half that (15 s, Nacos'
//     instanceHeartBeatTimeOut) until a beat comes: a beat marks it
//     healthy again, as it does one registered with healthy=false.
//   - A beat for an instance this agent does not hold (the agent
//     restarted without its data dir, or the client's server list sent
//     the beat to another agent) registers the instance from the beat's
//     JSON (ip, port, cluster, weight, metadata) and answers 10200, as
//     handleBeat does; without that JSON (a light beat) it answers 20404,
//     which makes Nacos clients register again.
//
// Only the agent that holds an instance decides its health, on its own
// clock: no decision compares two hosts' clocks.

// beat is one instance registered over HTTP and held by its beats.
type beat struct {
	key      string    // its record
	deadline time.Time // withdrawn after
	last     time.Time // its last beat (or registration)
	// sv and inst are the registration, from which the record is made
	// again when its health changes; known false when not at hand (a
	// restored application instance), whose health is then not marked.
	sv        service
	inst      nacoswire.Instance
	known     bool
	unhealthy bool // marked unhealthy: no beat for the health timeout
}

// healthTimeout is how long after its last beat an HTTP instance is
// listed unhealthy: half its BeatTimeout (15 s of 30 s, Nacos').
func (s *Server) healthTimeout() time.Duration { return s.cfg.BeatTimeout / 2 }

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
	s.writeMu.Lock()
	sav, err := s.registerHTTPLocked(sv, in, rec)
	s.writeMu.Unlock()
	return saved(sav, err)
}

// registerHTTPLocked records in (its record rec). writeMu held.
func (s *Server) registerHTTPLocked(sv service, in nacoswire.Instance, rec routes.Record) (lease.Saving, error) {
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
	now := time.Now()
	sav, err := s.holdBeat(id, b, rec, now.Add(s.cfg.BeatTimeout))
	if err != nil {
		return sav, err
	}
	s.mu.Lock()
	b = s.beats[id]
	b.last, b.sv, b.inst, b.known, b.unhealthy = now, sv, in, true, false
	s.mu.Unlock()
	return sav, nil
}

// holdBeat makes rec the record of the HTTP instance id (b its current
// state, nil when new), held until deadline. writeMu held.
func (s *Server) holdBeat(id string, b *beat, rec routes.Record, deadline time.Time) (lease.Saving, error) {
	var drops []string
	if b != nil && b.key != rec.Key() {
		drops = append(drops, b.key)
	}
	sav, err := s.hold(beatHolder(id), []routes.Record{rec}, drops, deadline, holdState{Kind: kindBeat, Identity: id})
	if err != nil {
		return sav, err
	}
	s.mu.Lock()
	if s.beats[id] == nil {
		s.beats[id] = &beat{}
	}
	s.beats[id].key, s.beats[id].deadline = rec.Key(), deadline
	s.mu.Unlock()
	return sav, nil
}

// restoredBeat is the state of an HTTP instance taken back after a
// restart: its record rec, kept until deadline; its registration is read
// back from its identity and record when they are a URL instance. Its
// health is counted from now.
func restoredBeat(id string, rec routes.Record, deadline time.Time) *beat {
	b := &beat{key: rec.Key(), deadline: deadline, last: time.Now()}
	parts := strings.Split(id, "\x00")
	if len(parts) != 6 || rec.URL == nil {
		return b
	}
	sv, err := newService(parts[0], parts[1], parts[2])
	if err != nil {
		return b
	}
	if in, ok := sv.instance(rec.URL.URL); ok {
		in.ClusterName = parts[5]
		b.sv, b.inst, b.known = sv, in, true
		b.unhealthy = !in.Healthy
	}
	return b
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
	if err := s.dropMeta(sv, in.IP, in.Port, in.ClusterName); err != nil { // update.go
		return lease.Saving{}, err
	}
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

// beatInfo is the beat's JSON (Nacos' RsInfo), what an unknown
// instance is registered from.
type beatInfo struct {
	IP          string            `json:"ip"`
	Port        int               `json:"port"`
	Cluster     string            `json:"cluster"`
	Weight      *float64          `json:"weight"`
	Metadata    map[string]string `json:"metadata"`
	ServiceName string            `json:"serviceName"`
}

// httpBeat renews an HTTP instance (Nacos' InstanceController.beat and
// handleBeat): 10200 when held or registered from the beat, 20404 for an
// unknown instance and a beat without its JSON.
func (s *Server) httpBeat(w http.ResponseWriter, r *http.Request) {
	sv, err := formService(r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	ip, cluster := r.FormValue("ip"), formCluster(r)
	port, _ := strconv.Atoi(or(r.FormValue("port"), "0"))
	var info *beatInfo
	if raw := r.FormValue("beat"); strings.TrimSpace(raw) != "" {
		info = &beatInfo{}
		if err := json.Unmarshal([]byte(raw), info); err != nil {
			httpError(w, http.StatusBadRequest, invalid(fmt.Errorf("beat is not JSON: %v", err)))
			return
		}
		if info.Cluster == "" {
			info.Cluster = cluster
		}
		ip, port, cluster = info.IP, info.Port, info.Cluster
	}
	code, err := s.beat(sv, ip, port, cluster, info)
	if err != nil {
		status := http.StatusInternalServerError
		if codeOf(err) == nacoswire.ErrOverThreshold { // past a budget, as httpRegister answers
			status = http.StatusServiceUnavailable
		}
		httpError(w, status, err)
		return
	}
	writeJSON(w, map[string]any{"clientBeatInterval": BeatInterval.Milliseconds(), "code": code, "lightBeatEnabled": true})
}

// beat renews the instance, or registers it from info when unknown; it
// answers Nacos' code.
func (s *Server) beat(sv service, ip string, port int, cluster string, info *beatInfo) (int, error) {
	id := identity(sv, ip, port, cluster)
	now := time.Now()
	deadline := now.Add(s.cfg.BeatTimeout)
	s.writeMu.Lock()
	s.mu.Lock()
	b := s.beats[id]
	var cur beat
	if b != nil {
		cur = *b
	}
	s.mu.Unlock()
	var sav lease.Saving
	var err error
	switch {
	case b == nil && info == nil:
		s.writeMu.Unlock()
		return 20404, nil
	case b == nil:
		in := nacoswire.Instance{IP: ip, Port: port, ClusterName: cluster, Weight: 1, Healthy: true, Enabled: true,
			Ephemeral: true, Metadata: info.Metadata}
		if info.Weight != nil {
			in.Weight = *info.Weight
		}
		if in.Weight < minWeight || in.Weight > maxWeight {
			err = invalid(fmt.Errorf("instance format invalid: The weights range from %.1f to %.1f", minWeight, maxWeight))
			break
		}
		var rec routes.Record
		if rec, err = sv.record(in, false); err != nil {
			err = invalid(err)
			break
		}
		sav, err = s.registerHTTPLocked(sv, in, rec)
		if err == nil {
			s.log.Info("1.x instance registered again from its beat", "service", sv.name, "ip", ip, "port", port)
		}
	case cur.known && (cur.unhealthy || !cur.inst.Healthy):
		// A beat makes the instance healthy (ClientBeatProcessorV2).
		in := cur.inst
		in.Healthy = true
		var rec routes.Record
		if rec, err = sv.record(in, false); err == nil {
			rec = s.settle(sv, in, false, rec)
			if sav, err = s.holdBeat(id, &cur, rec, deadline); err == nil {
				s.mu.Lock()
				if b := s.beats[id]; b != nil {
					b.inst, b.unhealthy, b.last = in, false, now
				}
				s.mu.Unlock()
			}
		}
	default:
		s.mu.Lock()
		b.deadline, b.last = deadline, now
		s.mu.Unlock()
		if err := s.renew(beatHolder(id), deadline); err != nil {
			s.log.Warn("saving a beat's deadline failed; a restart may expire the instance early", "err", err)
		}
	}
	s.writeMu.Unlock()
	if err := saved(sav, err); err != nil {
		return 0, err
	}
	return 10200, nil
}

// beatLoop marks unhealthy the HTTP instances without a beat for the
// health timeout, and withdraws those without one for BeatTimeout.
func (s *Server) beatLoop() {
	t := time.NewTicker(s.beatTick())
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.checkBeats(now)
		}
	}
}

// beatTick is how often beats are checked: a second, finer for the short
// timeouts of tests.
func (s *Server) beatTick() time.Duration {
	return min(time.Second, max(s.cfg.BeatTimeout/20, 10*time.Millisecond))
}

func (s *Server) checkBeats(now time.Time) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	var expired []string
	stale := map[string]beat{}
	for id, b := range s.beats {
		switch {
		case now.After(b.deadline):
			expired = append(expired, id)
		case b.known && !b.unhealthy && now.Sub(b.last) > s.healthTimeout():
			stale[id] = *b
		}
	}
	s.mu.Unlock()
	for _, id := range expired {
		if _, err := s.dropBeat(id, true); err != nil {
			s.log.Error("withdrawing an instance whose beats stopped failed: the data dir cannot save it; retrying", "err", err)
		}
	}
	for id, b := range stale {
		in := b.inst
		in.Healthy = false
		rec, err := b.sv.record(in, false)
		if err == nil {
			rec = s.settle(b.sv, in, false, rec)
			_, err = s.holdBeat(id, &b, rec, b.deadline)
		}
		if err != nil {
			s.log.Warn("marking an instance without beats unhealthy failed; retrying", "service", b.sv.name, "err", err)
			continue
		}
		s.mu.Lock()
		if cur := s.beats[id]; cur != nil {
			cur.unhealthy = true
		}
		s.mu.Unlock()
		s.log.Info("1.x instance without a beat for the health timeout is unhealthy", "service", b.sv.name,
			"ip", b.inst.IP, "port", b.inst.Port, "since", now.Sub(b.last).Round(time.Millisecond))
	}
}
