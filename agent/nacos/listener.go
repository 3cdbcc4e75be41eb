package nacos

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config listening over the 1.x open API: POST
// /nacos/v1/cs/configs/listener (Nacos' ConfigController.listener,
// LongPollingService, MD5Util). The form field Listening-Configs lists
// the configs a client holds and their MD5, each dataId ^2 group ^2 md5
// [^2 tenant] ^1 (^1 and ^2 the bytes 1 and 2). The door answers at
// once the listed configs whose content differs from what the client
// holds; when none does it holds the request (a long poll, with the
// header Long-Pulling-Timeout) until one of them changes, on this agent
// or on any other (the table's change hook wakes the door's poll loop,
// which ends the polls whose configs changed; gRPC pushes have their own
// loop and never delay it), or until the timeout less
// 500 ms, at least ListenMinWait (Nacos' 10 s), passes. The answer is
// the changed configs as dataId ^2 group [^2 tenant] ^1 each,
// URL-encoded as Java's URLEncoder does, and an empty body when nothing
// changed. Without Long-Pulling-Timeout the answer is immediate (Nacos'
// short polling); with Long-Pulling-Timeout-No-Hangup: true too when
// nothing changed.
//
// Held polls are bounded (Config.MaxListeners): past the bound a poll is
// refused, 503 after a second as Nacos' connection limit answers, so a
// client retrying at once cannot spin, and the refusal is logged.

const (
	// DefaultMaxListeners bounds the 1.x long polls held at once.
	DefaultMaxListeners = 10000
	// DefaultListenMinWait is Nacos' MIN_LONG_POOLING_TIMEOUT.
	DefaultListenMinWait = 10 * time.Second
	// listenMaxWait bounds how long one poll is held whatever the client
	// asks (clients ask 30 s).
	listenMaxWait = 2 * time.Minute
	// listenDelay is what Nacos answers before the client's timeout
	// (FIXED_DELAY_TIME).
	listenDelay = 500 * time.Millisecond
	// maxListenedConfigs is MD5Util.getClientMd5Map's bound.
	maxListenedConfigs = 10000
	// maxListenBody bounds a listener request's form (3000 configs, a
	// Java client's batch, of the longest names fit).
	maxListenBody = 4 << 20
	wordSep       = "\x02"
	lineSep       = "\x01"
)

// listened is one config a poll listens to, as the client named it, and
// the MD5 it holds.
type listened struct {
	id     configID // the config (tenant, group as stored)
	dataID string   // as named by the client, for the answer
	group  string
	tenant string
	md5    string
}

// longPoll is one held listener request. done gets the changed configs
// once: whoever removes the poll from Server.polls sends.
type longPoll struct {
	keys map[string]listened // by configID.key()
	done chan []listened
}

// parseListening is MD5Util.getClientMd5Map.
func parseListening(s string) ([]listened, error) {
	var out []listened
	seen := map[string]bool{}
	for line := range strings.SplitSeq(s, lineSep) {
		if line == "" {
			continue
		}
		f := strings.Split(line, wordSep)
		var l listened
		switch len(f) {
		case 3:
			l = listened{dataID: f[0], group: f[1], md5: f[2]}
		case 4:
			l = listened{dataID: f[0], group: f[1], md5: f[2], tenant: f[3]}
		default:
			return nil, errors.New("invalid probeModify")
		}
		id, err := newConfigID(l.tenant, l.group, l.dataID)
		if err != nil {
			return nil, fmt.Errorf("invalid probeModify: %v", err)
		}
		l.id = id
		if !seen[id.key()] {
			seen[id.key()] = true
			out = append(out, l)
		}
		if len(out) > maxListenedConfigs {
			return nil, errors.New("invalid protocol, too much listener")
		}
	}
	return out, nil
}

// changedOf lists the configs whose content differs from what the client
// holds. An absent config matches what clients hold for it: Java sends ""
// and Go the MD5 of "".
func (s *Server) changedOf(ls []listened) []listened {
	var out []listened
	for _, l := range ls {
		content, found := s.config(l.id)
		same := (!found && (l.md5 == "" || l.md5 == md5Hex(""))) || (found && l.md5 == md5Hex(content))
		if !same {
			out = append(out, l)
		}
	}
	return out
}

// listenAnswer is MD5Util.compareMd5ResultString.
func listenAnswer(changed []listened) string {
	var b strings.Builder
	for _, l := range changed {
		b.WriteString(l.dataID + wordSep + l.group)
		if strings.TrimSpace(l.tenant) != "" {
			b.WriteString(wordSep + l.tenant)
		}
		b.WriteString(lineSep)
	}
	return javaURLEncode(b.String())
}

// javaURLEncode is java.net.URLEncoder.encode(s, "UTF-8").
func javaURLEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte(".-*_", c) >= 0:
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func (s *Server) httpListen(w http.ResponseWriter, r *http.Request) {
	raw := r.FormValue("Listening-Configs")
	if strings.TrimSpace(raw) == "" {
		configError(w, http.StatusBadRequest, invalid(errors.New("invalid probeModify")))
		return
	}
	// Nacos decodes the field once more than the form does.
	probe, err := url.QueryUnescape(raw)
	if err != nil {
		configError(w, http.StatusBadRequest, invalid(errors.New("invalid probeModify")))
		return
	}
	ls, err := parseListening(probe)
	if err != nil {
		configError(w, http.StatusBadRequest, invalid(err))
		return
	}
	noCache(w)
	timeoutHeader := r.Header.Get("Long-Pulling-Timeout")
	if changed := s.changedOf(ls); len(changed) > 0 || timeoutHeader == "" ||
		strings.EqualFold(r.Header.Get("Long-Pulling-Timeout-No-Hangup"), "true") {
		s.answerListen(w, changed, timeoutHeader == "")
		return
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(timeoutHeader), 10, 64)
	if err != nil {
		configError(w, http.StatusBadRequest, invalid(fmt.Errorf("Long-Pulling-Timeout %q is not a number", timeoutHeader)))
		return
	}
	wait := min(max(s.cfg.ListenMinWait, time.Duration(ms)*time.Millisecond-listenDelay), listenMaxWait)
	p := &longPoll{keys: make(map[string]listened, len(ls)), done: make(chan []listened, 1)}
	for _, l := range ls {
		p.keys[l.id.key()] = l
	}
	if !s.addPoll(p) {
		s.stats.Add(1, "http_listeners_refused", label("route", "listener"), label("reason", "limit"))
		s.log.Warn("refusing a 1.x config listener: the door holds its limit of listeners", "limit", s.cfg.MaxListeners,
			"remote", r.RemoteAddr)
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
		case <-s.ctx.Done():
		}
		http.Error(w, fmt.Sprintf("too many config listeners on this agent (limit %d); retry later", s.cfg.MaxListeners),
			http.StatusServiceUnavailable)
		return
	}
	// A change between the check above and adding the poll woke nobody.
	if changed := s.changedOf(ls); len(changed) > 0 && s.removePoll(p) {
		s.answerListen(w, changed, false)
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	var changed []listened
	select {
	case changed = <-p.done:
	case <-t.C:
	case <-r.Context().Done():
	case <-s.ctx.Done():
	}
	if !s.removePoll(p) && changed == nil {
		select { // woken at the same moment: its answer is ready
		case changed = <-p.done:
		default:
		}
	}
	if r.Context().Err() != nil {
		return
	}
	s.answerListen(w, changed, false)
}

// answerListen writes a listener's answer: the changed configs, in the
// body (println in Nacos), and for a short poll in the headers older
// clients read too.
func (s *Server) answerListen(w http.ResponseWriter, changed []listened, short bool) {
	if short {
		var old strings.Builder
		for _, l := range changed {
			old.WriteString(l.dataID + ":" + l.group + ";")
		}
		w.Header().Set("Probe-Modify-Response", old.String())
		w.Header().Set("Probe-Modify-Response-New", listenAnswer(changed))
	}
	w.Header().Set("Content-Type", "text/html;charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	if len(changed) > 0 {
		w.Write([]byte(listenAnswer(changed) + "\n"))
	}
}

// addPoll holds p, or reports false at the limit.
func (s *Server) addPoll(p *longPoll) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.polls) >= s.cfg.MaxListeners {
		return false
	}
	s.polls[p] = struct{}{}
	return true
}

// removePoll lets go of p; false when it was gone already (answered).
func (s *Server) removePoll(p *longPoll) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, held := s.polls[p]
	delete(s.polls, p)
	return held
}

// pollLoop wakes the polls whose configs changed.
func (s *Server) pollLoop() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.push.pollWake:
		}
		s.wakePolls(s.push.takePolled())
	}
}

// wakePolls ends the polls listening to a config that changed (configs
// by configID.key()) whose content now differs from what their client
// holds. Called by pollLoop.
func (s *Server) wakePolls(configs map[string]bool) {
	if len(configs) == 0 {
		return
	}
	var candidates []*longPoll
	s.mu.Lock()
	for p := range s.polls {
		for k := range configs {
			if _, ok := p.keys[k]; ok {
				candidates = append(candidates, p)
				break
			}
		}
	}
	s.mu.Unlock()
	for _, p := range candidates {
		var ls []listened
		for k := range configs {
			if l, ok := p.keys[k]; ok {
				ls = append(ls, l)
			}
		}
		if changed := s.changedOf(ls); len(changed) > 0 && s.removePoll(p) {
			p.done <- changed
		}
	}
}

// pollsHeld counts the held 1.x listeners.
func (s *Server) pollsHeld() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.polls)
}
