package gossip

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
)

// A query asks every alive member to run a named handler and collects the
// answers: how `namecast keys` rotates the keyring cluster-wide and reports
// per-member success. Requests and answers go over memberlist's reliable
// (TCP) messages; a member that does not answer by the deadline is
// reported as such by the caller.

// QueryHandler runs on each member for a query of its name.
type QueryHandler func(payload []byte) ([]byte, error)

// QueryAnswer is one member's answer.
type QueryAnswer struct {
	Payload []byte `json:"payload,omitempty"`
	Error   string `json:"error,omitempty"`
}

type queryMsg struct {
	ID      string `json:"id"`
	From    string `json:"f"`
	Name    string `json:"n"`
	Payload []byte `json:"p"`
}

type answerMsg struct {
	ID     string      `json:"id"`
	From   string      `json:"f"`
	Answer QueryAnswer `json:"a"`
}

type queries struct {
	mu       sync.Mutex
	handlers map[string]QueryHandler
	waiting  map[string]chan answerMsg
}

// HandleQuery registers the handler for queries named name.
func (g *Gossip) HandleQuery(name string, h QueryHandler) {
	g.q.mu.Lock()
	defer g.q.mu.Unlock()
	if g.q.handlers == nil {
		g.q.handlers = map[string]QueryHandler{}
	}
	g.q.handlers[name] = h
}

// Query runs name on every alive member (us included) and returns the
// answers by member, once all have answered or ctx is done; members missing
// from the result did not answer in time.
func (g *Gossip) Query(ctx context.Context, name string, payload []byte) map[string]QueryAnswer {
	var idb [8]byte
	_, _ = rand.Read(idb[:])
	id := hex.EncodeToString(idb[:])
	ch := make(chan answerMsg, 64)
	g.q.mu.Lock()
	if g.q.waiting == nil {
		g.q.waiting = map[string]chan answerMsg{}
	}
	g.q.waiting[id] = ch
	g.q.mu.Unlock()
	defer func() {
		g.q.mu.Lock()
		delete(g.q.waiting, id)
		g.q.mu.Unlock()
	}()

	out := map[string]QueryAnswer{g.name: g.runQuery(name, payload)}
	want := 1
	msg := encode(msgQuery, queryMsg{ID: id, From: g.name, Name: name, Payload: payload})
	for _, m := range g.Members() {
		if m.Name == g.name || m.Status != StatusAlive {
			continue
		}
		want++
		if n := g.node(m.Name); n == nil || g.ml.Load().SendReliable(n, msg) != nil {
			out[m.Name] = QueryAnswer{Error: "unreachable"}
		}
	}
	for len(out) < want {
		select {
		case a := <-ch:
			out[a.From] = a.Answer
		case <-ctx.Done():
			return out
		}
	}
	return out
}

func (g *Gossip) runQuery(name string, payload []byte) QueryAnswer {
	g.q.mu.Lock()
	h := g.q.handlers[name]
	g.q.mu.Unlock()
	if h == nil {
		return QueryAnswer{Error: fmt.Sprintf("no handler for %q on this member", name)}
	}
	res, err := h(payload)
	if err != nil {
		return QueryAnswer{Error: err.Error()}
	}
	return QueryAnswer{Payload: res}
}

func (g *Gossip) handleQuery(q queryMsg) {
	g.submit(func() {
		g.sendReliable(q.From, encode(msgAnswer, answerMsg{ID: q.ID, From: g.name, Answer: g.runQuery(q.Name, q.Payload)}))
	})
}

func (g *Gossip) handleAnswer(a answerMsg) {
	g.q.mu.Lock()
	ch := g.q.waiting[a.ID]
	g.q.mu.Unlock()
	if ch != nil {
		select {
		case ch <- a:
		default:
		}
	}
}
