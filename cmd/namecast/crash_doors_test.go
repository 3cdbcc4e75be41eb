package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
		if k.kind == kindBroker {
			want.val = fmt.Sprintf("q%d", 1+w.seq%8)
		}
	}
	var o outcome
	switch k.kind {
	case kindURL, kindRule:
		o = w.viaHTTP(k, want)
	case kindKV:
		o = w.viaRocketMQ(k, want)
	case kindBroker:
		o = w.viaBroker(k, want)
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
		w.rmqLost()
		return oUnknown
	}
	if resp.Code == remoting.Success {
		return oAcked
	}
	k.note("remark %q", resp.Remark)
	return oRefused
}

// rmqLost closes the writer's RocketMQ connection after it failed. The
// brokers registered over it are withdrawn as the connection closes (as
// Java's NameServer does), which no client is told, so each may be gone;
// or, where the agent died first, restored from its data dir.
func (w *crashWriter) rmqLost() {
	w.rmq.Close()
	w.rmq = nil
	for _, k := range w.keys {
		if k.kind == kindBroker {
			k.inFlight(kstate{})
		}
	}
}

// viaBroker registers the key's broker over the RocketMQ door, with one
// topic whose queue count is its value (a changed count is a changed
// registration, its DataVersion moved on), or unregisters it.
func (w *crashWriter) viaBroker(k *ckey, want kstate) outcome {
	if w.rmq == nil {
		var err error
		if w.rmq, err = rocketmqtest.Dial(w.p.rmq); err != nil {
			return oNotSent
		}
	}
	b := w.broker(k, want.val)
	req := b.UnregisterRequest()
	if want.present {
		var err error
		if req, err = b.RegisterRequest(); err != nil {
			panic(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	resp, err := w.rmq.Call(ctx, req)
	cancel()
	if err != nil {
		w.rmqLost()
		return oUnknown
	}
	if resp.Code == remoting.Success {
		return oAcked
	}
	k.note("remark %q", resp.Remark)
	return oRefused
}

func (w *crashWriter) broker(k *ckey, val string) *rocketmqtest.Broker {
	i := slices.Index(w.keys, k)
	// It sends no heartbeats: its registration must outlast the test
	// (Java's 120 s would withdraw it, which the model would count lost).
	b := &rocketmqtest.Broker{Cluster: "crash", Name: k.name, Addr: fmt.Sprintf("10.77.%d.%d:10911", w.id+1, i+1),
		DataVersion:      remoting.DataVersion{Counter: int64(w.seq), Timestamp: time.Now().UnixMilli()},
		HeartbeatTimeout: time.Hour}
	if n, err := strconv.Atoi(strings.TrimPrefix(val, "q")); err == nil {
		// Two topics: a broker's first registration with one only is
		// refused (RocketMQ #4522: it would stand for its whole table).
		b.Topics = map[string]remoting.TopicConfig{"crash-" + k.name: rocketmqtest.Topic("crash-"+k.name, n),
			"crash-" + k.name + "-fixed": rocketmqtest.Topic("crash-"+k.name+"-fixed", 1)}
	}
	return b
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

var readQueueNums = regexp.MustCompile(`"readQueueNums":(\d+)`)

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
		case kindBroker:
			resp, err := rmq.Route("crash-"+k.name, remoting.VersionCurrent)
			if err != nil {
				return nil, err
			}
			switch resp.Code {
			case remoting.TopicNotExist:
			case remoting.Success:
				m := readQueueNums.FindSubmatch(resp.Body)
				if m == nil {
					return nil, fmt.Errorf("%s: route of crash-%s without readQueueNums: %s", p.name, k.name, resp.Body)
				}
				s = kstate{present: true, val: "q" + string(m[1])}
			default: // not ready yet, say: no answer about the key
				return nil, fmt.Errorf("%s: route of crash-%s: code %d %q", p.name, k.name, resp.Code, resp.Remark)
			}
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
