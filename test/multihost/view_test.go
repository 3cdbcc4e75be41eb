package multihost

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// pollEvery spaces the checks of poll: each check is several HTTP calls to
// every agent, and checking every 15 ms would take CPU from the agents whose
// failure detection the tests time. It is also the resolution of the
// figures the tests report.
const pollEvery = 100 * time.Millisecond

// poll is testutil.Eventually checking cond at most every pollEvery.
func poll(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	var last time.Time
	lastErr := errors.New("not checked yet")
	testutil.Eventually(t, timeout, func() error {
		if time.Since(last) >= pollEvery {
			last, lastErr = time.Now(), cond()
		}
		return lastErr
	})
}

// waitAlive waits until every agent of as lists exactly want as its alive
// members.
func waitAlive(t testing.TB, timeout time.Duration, as []*agent, want []string) {
	t.Helper()
	poll(t, timeout, func() error {
		for _, a := range as {
			got, err := a.alive()
			if err != nil {
				return err
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("%s sees %v alive, want %v", a.node, got, want)
			}
		}
		return nil
	})
}

// waitTopics waits until every agent of as serves exactly the topics want.
func waitTopics(t *testing.T, timeout time.Duration, as []*agent, want ...string) {
	t.Helper()
	slices.Sort(want)
	poll(t, timeout, func() error {
		for _, a := range as {
			got, err := a.topics()
			if err != nil {
				return err
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("%s serves topics %v, want %v", a.node, got, want)
			}
		}
		return nil
	})
}

// route is a topic's RocketMQ route as GET /v1/topics/{topic} answers it.
type route struct {
	QueueDatas  []queueData  `json:"queueDatas"`
	BrokerDatas []brokerData `json:"brokerDatas"`
}

type queueData struct {
	BrokerName     string `json:"brokerName"`
	ReadQueueNums  int    `json:"readQueueNums"`
	WriteQueueNums int    `json:"writeQueueNums"`
	Perm           int    `json:"perm"`
	TopicSysFlag   int    `json:"topicSysFlag"`
}

type brokerData struct {
	Cluster     string            `json:"cluster"`
	BrokerName  string            `json:"brokerName"`
	BrokerAddrs map[string]string `json:"brokerAddrs"`
}

func (a *agent) route(topic string) (route, error) {
	var r route
	err := a.call("GET", "/v1/topics/"+url.PathEscape(topic), nil, &r)
	return r, err
}

// routeView is everything an agent serves about RocketMQ routes (its
// topics, the cluster table and every topic's route) as canonical JSON, so
// two agents hold the same routes exactly when their views are equal.
// Brokers are sorted by name: agents order them by their own RTT estimates.
func (a *agent) routeView() (string, error) {
	var v struct {
		Topics   []string         `json:"topics"`
		Clusters json.RawMessage  `json:"clusters"`
		Routes   map[string]route `json:"routes"`
	}
	var err error
	if v.Topics, err = a.topics(); err != nil {
		return "", err
	}
	var clusters struct {
		BrokerAddrTable  map[string]json.RawMessage `json:"brokerAddrTable"`
		ClusterAddrTable map[string][]string        `json:"clusterAddrTable"`
	}
	if err := a.call("GET", "/v1/clusters", nil, &clusters); err != nil {
		return "", err
	}
	for _, names := range clusters.ClusterAddrTable {
		slices.Sort(names)
	}
	v.Clusters, _ = json.Marshal(clusters)
	v.Routes = map[string]route{}
	for _, topic := range v.Topics {
		r, err := a.route(topic)
		if err != nil {
			return "", err // the topic went between the two calls: look again
		}
		slices.SortFunc(r.QueueDatas, func(x, y queueData) int { return strings.Compare(x.BrokerName, y.BrokerName) })
		slices.SortFunc(r.BrokerDatas, func(x, y brokerData) int { return strings.Compare(x.BrokerName, y.BrokerName) })
		v.Routes[topic] = r
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// settle waits until every agent of as has served the view want for stable
// without a break, and returns when that stretch began, which must be within
// timeout. Right after a partition heals the views can match and then break
// once more (a death verdict from a side that was cut off, reaching members
// that are alive, makes them drop those routes until the refutation comes):
// the first match alone would flatter the figure.
func settle(t *testing.T, timeout, stable time.Duration, as []*agent, want string) time.Time {
	t.Helper()
	start := time.Now()
	var since time.Time // zero while the views differ
	poll(t, timeout+stable, func() error {
		if err := sameView(as, want); err != nil {
			since = time.Time{}
			return err
		}
		if since.IsZero() {
			since = time.Now()
		}
		if d := time.Since(since); d < stable {
			return fmt.Errorf("route views identical for only %v", d.Round(time.Millisecond))
		}
		return nil
	})
	if d := since.Sub(start); d > timeout {
		t.Fatalf("route views became identical for good only %v after the start, want within %v", d, timeout)
	}
	return since
}

// waitView waits until every agent of as serves the route view want.
func waitView(t *testing.T, timeout time.Duration, as []*agent, want string) {
	t.Helper()
	poll(t, timeout, func() error { return sameView(as, want) })
}

func sameView(as []*agent, want string) error {
	var diff []string
	for _, a := range as {
		got, err := a.routeView()
		if err != nil {
			return err
		}
		if got != want {
			diff = append(diff, a.node+"="+digest(got))
		}
	}
	if len(diff) > 0 {
		return fmt.Errorf("route views differ from %s: %s", digest(want), strings.Join(diff, " "))
	}
	return nil
}

// digest names a view briefly in messages.
func digest(view string) string {
	sum := sha256.Sum256([]byte(view))
	return hex.EncodeToString(sum[:6])
}
