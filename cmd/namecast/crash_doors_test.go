package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/agent/zookeeper/zkwire"
)

// crashWriter writes its keys through the three doors of its home agent,
// one operation at a time, and keeps the model of them (crash_model_test.go).
type crashWriter struct {
	id   int
	home int
	p    *proc
	c    *crashCluster
	keys []*ckey
	hc   *http.Client
	rmq  *rocketmqtest.Client
	zk   *crashZK
	rng  *rand.Rand
	seq  int

	ops, acked, refused, unanswered int
	lost, resurrected               int // seen by the writer itself
	lostToDamage                    int
	problems                        []string
}

func crashURL(name string) string {
	return "dubbo://10.77.0.1:20880/com.example.Crash?instance=" + name
}
func crashRule(name string) string {
	return "route://0.0.0.0/com.example.Crash?category=routers&dynamic=false&rule=" + name
}

// outcome of one operation.
type outcome int

const (
	oAcked   outcome = iota // done
	oRefused                // the door said no: nothing changed
	oUnknown                // no answer: may or may not be done
	oNotSent                // the agent was not there: nothing asked
)

// step does one random operation on one random key.
func (w *crashWriter) step() {
	k := w.keys[w.rng.IntN(len(w.keys))]
	want := kstate{present: w.rng.IntN(2) == 0}
	if want.present && k.kind != kindURL && k.kind != kindRule {
		w.seq++
		want.val = fmt.Sprintf("w%d.%d", w.id, w.seq)
	}
	var o outcome
	switch k.kind {
	case kindURL, kindRule:
		o = w.viaHTTP(k, want)
	case kindKV:
		o = w.viaRocketMQ(k, want)
	default:
		o = w.viaZooKeeper(k, want)
	}
	k.note("%s -> %v", want, []string{"acked", "refused", "unanswered", "not sent"}[o])
	switch o {
	case oAcked:
		k.acked(want)
		w.acked++
	case oRefused:
		w.refused++
	case oUnknown:
		k.inFlight(want)
		w.unanswered++
	case oNotSent:
		time.Sleep(20 * time.Millisecond) // the agent is down: wait for it
		return
	}
	w.ops++
}

// observe: an answer showed the key in state got now (a 404 or NONODE,
// a NODEEXISTS); it must be a state the key may be in.
func (w *crashWriter) observe(k *ckey, got kstate, how string) {
	switch k.judge(got, w.c.mayLose(k.kind, k.home)) {
	case vOK:
		if !got.present && !slices.Contains(k.allowed, got) {
			w.lostToDamage++
		}
	case vLost:
		w.lost++
		w.problems = append(w.problems, fmt.Sprintf("%s: %s answered %s, owed %s; its operations: %v", k, how, got, k.allowedString(), k.history))
	case vResurrected:
		w.resurrected++
		w.problems = append(w.problems, fmt.Sprintf("%s: %s answered %s, owed %s; its operations: %v", k, how, got, k.allowedString(), k.history))
	}
	if got == presentUnread {
		// keep the present states: which of them is not known
		var keep []kstate
		for _, s := range k.allowed {
			if s.present {
				keep = append(keep, s)
			}
		}
		if len(keep) > 0 {
			k.allowed = keep
			return
		}
	}
	k.allowed = []kstate{got}
}

func (w *crashWriter) viaHTTP(k *ckey, want kstate) outcome {
	u := crashURL(k.name)
	if k.kind == kindRule {
		u = crashRule(k.name)
	}
	var req *http.Request
	if want.present {
		body, _ := json.Marshal(map[string]string{"url": u})
		req, _ = http.NewRequest("PUT", "http://"+w.p.http+"/v1/urls", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req, _ = http.NewRequest("DELETE", "http://"+w.p.http+"/v1/urls?url="+url.QueryEscape(u), nil)
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return oNotSent
		}
		return oUnknown
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == 200:
		return oAcked
	case resp.StatusCode == 404 && !want.present:
		w.observe(k, kstate{}, "DELETE 404")
		return oAcked
	case resp.StatusCode == 503 || resp.StatusCode == 507:
		return oRefused
	}
	k.note("HTTP %d", resp.StatusCode)
	return oUnknown
}

func (w *crashWriter) viaRocketMQ(k *ckey, want kstate) outcome {
	if w.rmq == nil {
		var err error
		if w.rmq, err = rocketmqtest.Dial(w.p.rmq); err != nil {
			return oNotSent
		}
	}
	code, ext := remoting.PutKVConfig, map[string]string{"namespace": "crash", "key": k.name, "value": want.val}
	if !want.present {
		code, ext = remoting.DeleteKVConfig, map[string]string{"namespace": "crash", "key": k.name}
	}
	resp, err := w.rmq.Do(code, ext, nil)
	if err != nil {
		w.rmq.Close()
		w.rmq = nil
		return oUnknown
	}
	if resp.Code == remoting.Success {
		return oAcked
	}
	k.note("remark %q", resp.Remark)
	return oRefused
}

// viaZooKeeper creates, sets or deletes the key's znode in the writer's
// session: ephemeral under /services/crash, persistent (a rule) under
// /dubbo/config/crash.
func (w *crashWriter) viaZooKeeper(k *ckey, want kstate) outcome {
	if o, ok := w.zkAttach(); !ok {
		return o
	}
	if !want.present {
		code, err := w.zk.delete(k.path())
		return w.zkOutcome(k, code, err, "delete")
	}
	flags := zkwire.FlagPersistent
	if k.kind == kindEph {
		flags = zkwire.FlagEphemeral
	}
	if b, sure := k.believed(); sure && b.present {
		code, err := w.zk.setData(k.path(), []byte(want.val))
		if err != nil || code != zkwire.ErrNoNode {
			return w.zkOutcome(k, code, err, "setData")
		}
		w.observe(k, kstate{}, "setData NONODE")
	}
	code, err := w.zk.create(k.path(), []byte(want.val), flags)
	if err != nil || code != zkwire.ErrNodeExists {
		return w.zkOutcome(k, code, err, "create")
	}
	w.observe(k, presentUnread, "create NODEEXISTS")
	code, err = w.zk.setData(k.path(), []byte(want.val))
	return w.zkOutcome(k, code, err, "setData")
}

func (w *crashWriter) zkOutcome(k *ckey, code int32, err error, op string) outcome {
	switch {
	case errors.Is(err, errZKNotSent):
		return oNotSent
	case errors.Is(err, errZKExpired):
		w.sessionExpired()
		return oNotSent
	case err != nil:
		return oUnknown
	case code == zkwire.ErrOK:
		return oAcked
	case code == zkwire.ErrNoNode && op == "delete":
		w.observe(k, kstate{}, "delete NONODE")
		return oAcked
	}
	k.note("%s: %s", op, zkwire.ErrName(code))
	return oRefused
}

// zkAttach (re-)attaches the writer's session, making the parents its
// znodes need in a new one.
func (w *crashWriter) zkAttach() (outcome, bool) {
	fresh := w.zk.sid == 0
	switch err := w.zk.attach(); {
	case errors.Is(err, errZKExpired):
		w.sessionExpired()
		return oNotSent, false
	case errors.Is(err, errZKNotSent):
		return oNotSent, false
	case err != nil:
		return oNotSent, false // the handshake failed: nothing was asked
	}
	if fresh {
		for _, p := range []string{"/services", "/services/crash", "/dubbo", "/dubbo/config", "/dubbo/config/crash"} {
			code, err := w.zk.create(p, nil, zkwire.FlagPersistent)
			if err != nil {
				return oNotSent, false
			}
			if code != zkwire.ErrOK && code != zkwire.ErrNodeExists {
				w.zk.detach()
				return oNotSent, false
			}
		}
	}
	return oAcked, true
}

// sessionExpired: the agent answered the re-attach with "expired". Its
// ephemeral znodes went with the session, which is a loss unless damage
// to the home agent's lease files could have destroyed the session.
func (w *crashWriter) sessionExpired() {
	for _, k := range w.keys {
		if k.kind == kindEph {
			w.observe(k, kstate{}, "session expired on re-attach")
		}
	}
}

// read is what agent p serves for each of keys now, through the doors.
func readCrashKeys(p *proc, keys []*ckey) (map[*ckey]kstate, error) {
	hc := &http.Client{Timeout: 10 * time.Second}
	served := map[string]bool{}
	for _, cat := range []string{"providers", "routers"} {
		resp, err := hc.Get("http://" + p.http + "/v1/services/com.example.Crash?category=" + cat)
		if err != nil {
			return nil, err
		}
		var out struct {
			URLs []string `json:"urls"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != 200 && resp.StatusCode != 404 {
			return nil, fmt.Errorf("%s: GET /v1/services: %d", p.name, resp.StatusCode)
		}
		for _, u := range out.URLs {
			served[u] = true
		}
	}
	rmq, err := rocketmqtest.Dial(p.rmq)
	if err != nil {
		return nil, err
	}
	defer rmq.Close()
	zk := &crashZK{addr: p.zk}
	defer zk.close()
	got := map[*ckey]kstate{}
	for _, k := range keys {
		var s kstate
		switch k.kind {
		case kindURL:
			s.present = served[crashURL(k.name)]
		case kindRule:
			s.present = served[crashRule(k.name)]
		case kindKV:
			resp, err := rmq.Do(remoting.GetKVConfig, map[string]string{"namespace": "crash", "key": k.name}, nil)
			if err != nil {
				return nil, err
			}
			s.present = resp.Code == remoting.Success
			s.val = resp.ExtFields["value"]
		default:
			if s.val, s.present, err = zk.getData(k.path()); err != nil {
				return nil, fmt.Errorf("%s: %w", p.name, err)
			}
		}
		got[k] = s
	}
	return got, nil
}
