package gossip

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
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
	waiting  map[string]*pendingQuery
}

// pendingQuery collects the answers of one query. Every answer from a
// member asked is kept, however many there are: the set of members still
// owing one is fixed before the first request leaves, and the query is
// done when it is empty. (A channel of fixed size with a non-blocking send
// lost every answer past its size.)
type pendingQuery struct {
	mu    sync.Mutex
	owing map[string]bool
	out   map[string]QueryAnswer
	done  chan struct{}
}

// settle records from's answer if from still owes one, and reports whether
// it did.
func (p *pendingQuery) settle(from string, a QueryAnswer) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.owing[from] {
		return false // not asked, or a duplicate
	}
	delete(p.owing, from)
	p.out[from] = a
	if len(p.owing) == 0 {
		close(p.done)
	}
	return true
}

func (p *pendingQuery) answers() map[string]QueryAnswer {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]QueryAnswer, len(p.out))
	for k, v := range p.out {
		out[k] = v
	}
	return out
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
	return g.QuerySome(ctx, name, payload, 0)
}

// QuerySome is Query of at most n alive members besides us, picked at
// random (n ≤ 0: all of them): for a question any few can answer, whose
// answers are large.
func (g *Gossip) QuerySome(ctx context.Context, name string, payload []byte, n int) map[string]QueryAnswer {
	var idb [8]byte
	_, _ = rand.Read(idb[:])
	id := hex.EncodeToString(idb[:])
	p := &pendingQuery{owing: map[string]bool{g.name: true}, out: map[string]QueryAnswer{}, done: make(chan struct{})}
	var asked []string
	for _, m := range g.Members() {
		if m.Name != g.name && m.Status == StatusAlive {
			asked = append(asked, m.Name)
		}
	}
	if n > 0 && len(asked) > n {
		mrand.Shuffle(len(asked), func(i, j int) { asked[i], asked[j] = asked[j], asked[i] })
		asked = asked[:n]
	}
	for _, m := range asked {
		p.owing[m] = true
	}
	g.q.mu.Lock()
	if g.q.waiting == nil {
		g.q.waiting = map[string]*pendingQuery{}
	}
	g.q.waiting[id] = p
	g.q.mu.Unlock()
	defer func() {
		g.q.mu.Lock()
		delete(g.q.waiting, id)
		g.q.mu.Unlock()
	}()

	p.settle(g.name, g.runQuery(name, payload))
	msg := encode(msgQuery, queryMsg{ID: id, From: g.name, Name: name, Payload: payload})
	for _, member := range asked {
		if n := g.node(member); n == nil || g.ml.Load().SendReliable(n, msg) != nil {
			p.settle(member, QueryAnswer{Error: "unreachable"})
		}
	}
	select {
	case <-p.done:
	case <-ctx.Done():
	}
	return p.answers()
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

// handleQuery answers even a member we do not hold as alive yet
// (sendAnswer): a restarted one asks before its refutation of its old
// death reaches us (agent: settleRestored).
func (g *Gossip) handleQuery(q queryMsg) {
	g.submit(func() {
		g.sendAnswer(q.From, encode(msgAnswer, answerMsg{ID: q.ID, From: g.name, Answer: g.runQuery(q.Name, q.Payload)}))
	})
}

func (g *Gossip) handleAnswer(a answerMsg) {
	g.q.mu.Lock()
	p := g.q.waiting[a.ID]
	g.q.mu.Unlock()
	if p != nil {
		p.settle(a.From, a.Answer)
	}
}
