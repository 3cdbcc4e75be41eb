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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
)

// crashKey is one thing the crash test writes and deletes, and what the
// agent was last heard to have done with it.
type crashKey struct {
	kind, name string
	mu         sync.Mutex
	// known: the last answer was definite (present says which way);
	// false after an operation whose answer never came (a kill -9 in
	// flight): either outcome is then correct until the next answer.
	known, present bool
}

func (k *crashKey) settle(present bool) {
	k.mu.Lock()
	k.known, k.present = true, present
	k.mu.Unlock()
}

func (k *crashKey) unknown() {
	k.mu.Lock()
	k.known = false
	k.mu.Unlock()
}

// crashDoors writes and reads each kind of key through its door.
type crashDoors struct {
	p  *proc
	hc *http.Client
}

func crashURL(name string) string {
	return "dubbo://10.77.0.1:20880/com.example.Crash?instance=" + name
}
func crashRule(name string) string {
	return "route://0.0.0.0/com.example.Crash?category=routers&dynamic=false&rule=" + name
}

// write puts (or, with del, deletes) k through its door: its answer is
// definite (answered) when the door answered at all; sent is false when
// the request never reached the agent (the connection was refused), which
// then changed nothing.
func (d *crashDoors) write(k *crashKey, del bool, rmq *rocketmqtest.Client) (answered, ok, sent bool) {
	switch k.kind {
	case "url", "rule":
		u := crashURL(k.name)
		if k.kind == "rule" {
			u = crashRule(k.name)
		}
		var req *http.Request
		if del {
			req, _ = http.NewRequest("DELETE", "http://"+d.p.http+"/v1/urls?url="+url.QueryEscape(u), nil)
		} else {
			body, _ := json.Marshal(map[string]string{"url": u})
			req, _ = http.NewRequest("PUT", "http://"+d.p.http+"/v1/urls", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := d.hc.Do(req)
		if err != nil {
			var op *net.OpError
			return false, false, !(errors.As(err, &op) && op.Op == "dial")
		}
		resp.Body.Close()
		return true, resp.StatusCode == 200 || (del && resp.StatusCode == 404), true
	case "kv":
		if rmq == nil {
			return false, false, false
		}
		code, ext := remoting.PutKVConfig, map[string]string{"namespace": "crash", "key": k.name, "value": "v"}
		if del {
			code, ext = remoting.DeleteKVConfig, map[string]string{"namespace": "crash", "key": k.name}
		}
		resp, err := rmq.Do(code, ext, nil)
		if err != nil {
			return false, false, true
		}
		return true, resp.Code == remoting.Success, true
	}
	return false, false, false
}

// present reads whether k is there now.
func (d *crashDoors) present(k *crashKey, rmq *rocketmqtest.Client) (bool, error) {
	switch k.kind {
	case "url", "rule":
		cat := "providers"
		want := crashURL(k.name)
		if k.kind == "rule" {
			cat, want = "routers", crashRule(k.name)
		}
		resp, err := d.hc.Get("http://" + d.p.http + "/v1/services/com.example.Crash?category=" + cat)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		var out struct {
			URLs []string `json:"urls"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return slices.Contains(out.URLs, want), nil
	case "kv":
		resp, err := rmq.Do(remoting.GetKVConfig, map[string]string{"namespace": "crash", "key": k.name}, nil)
		if err != nil {
			return false, err
		}
		return resp.Code == remoting.Success, nil
	}
	return false, fmt.Errorf("kind %s", k.kind)
}

// A crash-consistency test in the spirit of Jepsen and ALICE: writers put
// and delete HTTP registrations, rules (persistent URLs) and RocketMQ KV
// entries on one agent with --data-dir and no peers (so whatever comes
// back comes from its disk), while the agent is killed -9 at random
// moments; after each restart a checker reads every key through its door
// and fails on any acknowledged write missing (lost) or acknowledged
// delete present (resurrected). A key whose last operation got no answer
// (in flight at the kill) may be either way until its next answer.
//
// Not yet here (issue 24): ZooKeeper writes, a disk that fills and frees,
// damaged files, a cluster of agents.
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	p := startProcs(t, 1)[0]
	d := &crashDoors{p: p, hc: &http.Client{Timeout: 3 * time.Second}}
	var keys []*crashKey
	for i := range 12 {
		for _, kind := range []string{"url", "rule", "kv"} {
			keys = append(keys, &crashKey{kind: kind, name: fmt.Sprintf("%s%d", kind, i), known: true})
		}
	}
	const crashes = 6
	var ops, writes, deletes, unanswered, lostAll, resurrectedAll int
	var countMu sync.Mutex
	for round := range crashes + 1 {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
				var mine []*crashKey
				for j, k := range keys {
					if (j/3)%3 == w {
						mine = append(mine, k)
					}
				}
				rmq, _ := rocketmqtest.Dial(p.rmq)
				defer func() {
					if rmq != nil {
						rmq.Close()
					}
				}()
				for {
					select {
					case <-stop:
						return
					default:
					}
					// Each key has one writer, so the model of it is
					// that writer's last answer.
					k := mine[rng.IntN(len(mine))]
					del := rng.IntN(2) == 0
					k.mu.Lock()
					prevKnown, prev := k.known, k.present
					k.mu.Unlock()
					k.unknown() // from the request on, until its answer
					answered, ok, sent := d.write(k, del, rmq)
					if !sent && prevKnown {
						k.settle(prev) // never reached the agent
					}
					countMu.Lock()
					ops++
					switch {
					case !answered:
						unanswered++
					case ok && del:
						deletes++
					case ok:
						writes++
					}
					countMu.Unlock()
					if answered && ok {
						k.settle(!del)
					}
					if !answered {
						if rmq != nil {
							rmq.Close()
						}
						rmq, _ = rocketmqtest.Dial(p.rmq)
					}
				}
			}()
		}
		if round < crashes {
			time.Sleep(time.Duration(100+rand.IntN(500)) * time.Millisecond) // a random moment under load
			p.stop(syscall.SIGKILL)
		}
		close(stop)
		wg.Wait()
		if round < crashes {
			p.start()
			waitUntil(t, 20*time.Second, p.healthy)
		}
		rmq, err := rocketmqtest.Dial(p.rmq)
		if err != nil {
			t.Fatal(err)
		}
		lost, resurrected, either := 0, 0, 0
		for _, k := range keys {
			k.mu.Lock()
			known, want := k.known, k.present
			k.mu.Unlock()
			got, err := d.present(k, rmq)
			if err != nil {
				t.Fatalf("reading %s %s: %v", k.kind, k.name, err)
			}
			switch {
			case !known:
				either++
				k.settle(got) // what the agent holds now is the truth to go on from
			case want && !got:
				lost++
				t.Errorf("round %d: %s %s was acknowledged written and is gone", round, k.kind, k.name)
			case !want && got:
				resurrected++
				t.Errorf("round %d: %s %s was acknowledged deleted and is back", round, k.kind, k.name)
			}
		}
		rmq.Close()
		lostAll += lost
		resurrectedAll += resurrected
		t.Logf("round %d: lost %d, resurrected %d, in flight at the kill %d", round, lost, resurrected, either)
	}
	t.Logf("operations %d (acknowledged writes %d, deletes %d, unanswered %d), crashes %d, disk-full episodes 0 (not yet), lost %d, resurrected %d",
		ops, writes, deletes, unanswered, crashes, lostAll, resurrectedAll)
}
