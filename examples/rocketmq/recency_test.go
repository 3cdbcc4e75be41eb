package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	rmqerrors "github.com/apache/rocketmq-client-go/v2/errors"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/rocketmq/remoting"
	"github.com/namecast/namecast/agent/rocketmq/rocketmqtest"
	"github.com/namecast/namecast/internal/testutil"
)

// routeWatch asks one agent for some topics' routes every 10 ms until
// stopped, both as the real Go client sees them (a fresh admin each poll:
// an admin caches a route forever) and as the raw GET_ROUTEINFO_BY_TOPIC
// answer, and keeps every change of answer of each reader and topic.
type routeWatch struct {
	stop, done chan struct{}
	mu         sync.Mutex
	polls      int
	missing    int                 // answers TOPIC_NOT_EXIST, of either reader
	answers    map[string][]string // "go TOPIC" or "raw TOPIC": each answer that differed from the one before
	err        error               // the first error that was not TOPIC_NOT_EXIST
}

func watchRoute(t *testing.T, ns string, topics ...string) *routeWatch {
	t.Helper()
	raw := dialNS(t, ns)
	w := &routeWatch{stop: make(chan struct{}), done: make(chan struct{}), answers: map[string][]string{}}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			got, missing, err := readRoutes(ns, raw, topics)
			w.mu.Lock()
			w.polls++
			w.missing += missing
			if err != nil && w.err == nil {
				w.err = err
			}
			for k, ans := range got {
				if seq := w.answers[k]; len(seq) == 0 || seq[len(seq)-1] != ans {
					w.answers[k] = append(seq, ans)
				}
			}
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(w.end)
	return w
}

func (w *routeWatch) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// polled waits until the watch has made n more polls: an observation
// window counted in answers, not in time.
func (w *routeWatch) polled(t *testing.T, n int) {
	t.Helper()
	w.mu.Lock()
	want := w.polls + n
	w.mu.Unlock()
	testutil.Eventually(t, time.Minute, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.polls < want {
			return fmt.Errorf("%d polls of %d", w.polls, want)
		}
		return nil
	})
}

// result stops the watch and checks it saw no error and no missing route,
// then returns each reader's and topic's answers.
func (w *routeWatch) result(t *testing.T) map[string][]string {
	t.Helper()
	w.end()
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("%d polls, %d answers without the route", w.polls, w.missing)
	if w.err != nil {
		t.Fatal(w.err)
	}
	if w.missing > 0 {
		t.Errorf("the route went missing in %d answers over %d polls: %q", w.missing, w.polls, w.answers)
	}
	return w.answers
}

// readRoutes is one poll: the real client's writable queues of every
// topic, then each raw route's queue data and broker addresses; missing
// counts the answers that were TOPIC_NOT_EXIST.
func readRoutes(ns string, raw *rocketmqtest.Client, topics []string) (map[string]string, int, error) {
	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{ns})))
	if err != nil {
		return nil, 0, err
	}
	defer adm.Close()
	got, missing := map[string]string{}, 0
	for _, topic := range topics {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		qs, err := adm.FetchPublishMessageQueues(ctx, topic)
		cancel()
		switch {
		case errors.Is(err, rmqerrors.ErrTopicNotExist):
			missing++
			got["go "+topic] = "TOPIC_NOT_EXIST"
		case err != nil:
			return nil, 0, fmt.Errorf("Go client: %w", err)
		default:
			var pub []string
			for _, q := range qs {
				pub = append(pub, fmt.Sprintf("%s/%d", q.BrokerName, q.QueueId))
			}
			sort.Strings(pub)
			got["go "+topic] = fmt.Sprint("publish ", pub)
		}
		resp, err := raw.Route(topic, 317)
		if err != nil {
			return nil, 0, fmt.Errorf("raw route: %w", err)
		}
		if resp.Code == remoting.TopicNotExist {
			missing++
			got["raw "+topic] = "TOPIC_NOT_EXIST"
			continue
		}
		var td remoting.TopicRouteData
		if err := remoting.Unmarshal(resp.Body, &td); err != nil {
			return nil, 0, fmt.Errorf("raw route: %w", err)
		}
		var b strings.Builder
		b.WriteString("queues")
		for _, q := range td.QueueDatas {
			fmt.Fprintf(&b, " %s r%d w%d p%d", q.BrokerName, q.ReadQueueNums, q.WriteQueueNums, q.Perm)
		}
		b.WriteString("; brokers")
		for _, bd := range td.BrokerDatas {
			fmt.Fprintf(&b, " %s %s %v", bd.Cluster, bd.BrokerName, bd.BrokerAddrs) // fmt sorts map keys
		}
		got["raw "+topic] = b.String()
	}
	return got, missing, nil
}

// javaBroker is a broker as Java 4.9.8 or 5.x registers it (5.x without
// slave-acting-master, its default), with topics of 4 queues each.
func javaBroker(t *testing.T, name string, version int, id int64, topics []string) *rocketmqtest.Broker {
	b := demoBroker(t, name, topics[0], version, version < remoting.VersionStaticTopics)
	for _, topic := range topics[1:] {
		b.Topics[topic] = rocketmqtest.Topic(topic, 4)
	}
	b.ID = id
	b.HAAddr = b.Addr
	return b
}

var javaVersions = []struct {
	name    string
	version int
}{{"4.9", 409}, {"5.x", remoting.VersionCurrent}}

// Issue 23 item 1. A broker registers with every NameServer address it is
// given, so with two agents it is registered on both. When the agent with
// the lower name lets go of it (connection closed, UNREGISTER_BROKER, the
// agent crashing or leaving, or the broker moving from it to the other
// agent), the other agent's registration still holds it: the real client
// polling a third agent every 10 ms must never miss the route, and its
// content must never change. Before, the other agent had turned its own
// records into copies of the lower-named agent's, then deleted them
// because the broker was registered (on itself).
func TestBrokerOnTwoAgentsSurvivesTheLowerOneLettingGo(t *testing.T) {
	for _, v := range javaVersions {
		for _, how := range []string{"connection closed", "unregister", "agent crashed", "agent left", "moved"} {
			t.Run(v.name+"/"+how, func(t *testing.T) {
				c := agenttest.Start(t, 3) // agent-0 < agent-1 < agent-2
				nsA, nsB, nsC := nameServer(t, c, 0), nameServer(t, c, 1), nameServer(t, c, 2)
				topics := []string{"TwoAgents"}
				b := javaBroker(t, "broker-two", v.version, 0, topics)
				onA, onB := dialNS(t, nsA), dialNS(t, nsB)
				if _, err := onA.Register(b); err != nil {
					t.Fatal(err)
				}
				if how == "moved" {
					// Served from A alone first; then the broker moves to B.
					testutil.Eventually(t, 10*time.Second, wantQueues(nsC, topics[0], b.Name, 4))
				}
				if _, err := onB.Register(b); err != nil {
					t.Fatal(err)
				}
				// Both agents' registrations have reached C, and C serves
				// the route: until its first sync with the cluster is done
				// it answers "name server not ready" (even while it holds
				// both registrations already), which the watch would count
				// as an error.
				testutil.Eventually(t, 10*time.Second, func() error { return holders(c, 2, b.Name, "agent-0", "agent-1") })
				testutil.Eventually(t, 20*time.Second, wantQueues(nsC, topics[0], b.Name, 4))
				w := watchRoute(t, nsC, topics...)
				w.polled(t, 5)
				switch how {
				case "connection closed", "moved":
					onA.Close()
				case "unregister":
					if err := onA.Unregister(b); err != nil {
						t.Fatal(err)
					}
					onA.Close()
				case "agent crashed":
					c.Crash(0)
				case "agent left":
					c.Leave(0)
				}
				// A's records are gone from C (and from B, which drops
				// them before C or at about the same time); then the
				// watch goes on for 100 polls, the time B had to act on
				// A's withdrawal.
				testutil.Eventually(t, 20*time.Second, func() error { return holders(c, 2, b.Name, "agent-1") })
				w.polled(t, 100)
				for k, seq := range w.result(t) {
					if len(seq) != 1 {
						t.Errorf("%s: the answer changed: %q", k, seq)
					}
				}
			})
		}
	}
}

// Issue 23 item 2. A master on A unregisters (UNREGISTER_BROKER, then its
// connection closes, as a Java broker shuts down) while its slave is
// registered on B: Java keeps the group's queue data while any member is
// registered, so the real client polling C every 10 ms must never miss a
// route. The queue data never changes; the broker addresses lose the
// master once and for good (and with it the writable queues). Before, B
// deleted its copy of a topic's queue data when A's delete of it reached
// B before A's broker delete (20 topics: 20 chances a run).
func TestMasterUnregistersWhileSlaveIsOnAnotherAgent(t *testing.T) {
	for _, v := range javaVersions {
		t.Run(v.name, func(t *testing.T) {
			c := agenttest.Start(t, 3)
			nsA, nsB, nsC := nameServer(t, c, 0), nameServer(t, c, 1), nameServer(t, c, 2)
			var topics []string
			for i := range 20 {
				topics = append(topics, fmt.Sprintf("MasterLeaves%02d", i))
			}
			m, s := javaBroker(t, "broker-ms", v.version, 0, topics), javaBroker(t, "broker-ms", v.version, 1, topics)
			onA, onB := dialNS(t, nsA), dialNS(t, nsB)
			if _, err := onA.Register(m); err != nil {
				t.Fatal(err)
			}
			if _, err := onB.Register(s); err != nil {
				t.Fatal(err)
			}
			// C serves every topic and holds B's copy of it: B's copy
			// made on B may still be on its way to C, and A's withdrawal
			// reaching C before it leaves C nothing to serve (the last
			// topic answers TOPIC_NOT_EXIST, then the slave alone).
			for _, topic := range topics {
				testutil.Eventually(t, 10*time.Second, wantQueues(nsC, topic, m.Name, 4))
				testutil.Eventually(t, 10*time.Second, func() error { return hasQueueCopy(c, 1, m.Name, topic) })
				testutil.Eventually(t, 10*time.Second, func() error { return holdsQueueFrom(c, 2, "agent-1", m.Name, topic) })
			}
			w := watchRoute(t, nsC, topics...)
			w.polled(t, 5)
			if err := onA.Unregister(m); err != nil {
				t.Fatal(err)
			}
			onA.Close()
			testutil.Eventually(t, 20*time.Second, func() error { return holders(c, 2, m.Name, "agent-1") })
			w.polled(t, 100)
			answers := w.result(t)
			queues := fmt.Sprintf("queues %s r4 w4 p6;", m.Name)
			both := fmt.Sprintf("map[0:%s 1:%s]", m.Addr, s.Addr)
			slaveOnly := fmt.Sprintf("map[1:%s]", s.Addr)
			for _, topic := range topics {
				if seq := answers["raw "+topic]; len(seq) != 2 || !strings.Contains(seq[0], both) || !strings.Contains(seq[1], slaveOnly) ||
					!strings.Contains(seq[0], queues) || !strings.Contains(seq[1], queues) {
					t.Errorf("raw route of %s: %q, want the group with both members, then with the slave alone, the same queues throughout", topic, seq)
				}
				if seq := answers["go "+topic]; len(seq) != 2 || seq[1] != "publish []" {
					t.Errorf("Go client's queues of %s: %q, want the master's, then none", topic, seq)
				}
			}
		})
	}
}

// holdsQueueFrom checks that agent i's table holds origin's queue record
// of broker's topic.
func holdsQueueFrom(c *agenttest.Cluster, i int, origin, broker, topic string) error {
	for _, h := range c.Agent(i).Table().Holders("queue/" + broker + "/" + topic) {
		if h.Origin == origin && h.Rec.Queue != nil {
			return nil
		}
	}
	return fmt.Errorf("agent-%d holds no queue record of %s/%s from %s yet", i, broker, topic, origin)
}

// holders checks that agent i's table holds broker records of name from
// exactly the agents given.
func holders(c *agenttest.Cluster, i int, name string, want ...string) error {
	got := map[string]bool{}
	for _, o := range c.Agent(i).Table().BrokerHolders(name) {
		got[o] = true
	}
	if len(got) != len(want) {
		return fmt.Errorf("agent-%d holds records of %s from %v, want from %v", i, name, got, want)
	}
	for _, o := range want {
		if !got[o] {
			return fmt.Errorf("agent-%d holds records of %s from %v, want from %v", i, name, got, want)
		}
	}
	return nil
}
