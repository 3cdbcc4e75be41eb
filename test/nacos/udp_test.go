package nacos

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	v1clients "github.com/nacos-group/nacos-sdk-go/clients"
	v1naming "github.com/nacos-group/nacos-sdk-go/clients/naming_client"
	v1constant "github.com/nacos-group/nacos-sdk-go/common/constant"
	v1model "github.com/nacos-group/nacos-sdk-go/model"
	v1vo "github.com/nacos-group/nacos-sdk-go/vo"

	"github.com/namecast/namecast/agent/nacos"
	"github.com/namecast/namecast/agent/nacos/nacostest"
	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

// udpSubscriber is what a 1.x client (the Java client 1.x, nacos-sdk-go
// v1, nacos-sdk-python) does to be pushed, written against the API as
// Nacos documents and serves it: it binds a UDP socket, names its port as
// udpPort when it lists a service (GET /nacos/v1/ns/instance/list), and
// acks each push {"type":"dom","data":...,"lastRefTime":n} with
// {"type":"push-ack","lastRefTime":"n","data":""}.
type udpSubscriber struct {
	t    testing.TB
	conn *net.UDPConn
}

func newUDPSubscriber(t testing.TB) *udpSubscriber {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{}) // every address, as 1.x clients bind
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &udpSubscriber{t, conn}
}

func (u *udpSubscriber) list(s *nacos.Server, svc string) {
	q := url.Values{"serviceName": {svc}, "udpPort": {strconv.Itoa(u.conn.LocalAddr().(*net.UDPAddr).Port)},
		"clientIP": {"127.0.0.1"}, "healthyOnly": {"false"}}
	resp, err := http.Get("http://" + s.Addr() + "/nacos/v1/ns/instance/list?" + q.Encode())
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 {
		u.t.Fatalf("list: %d %s", resp.StatusCode, b)
	}
}

type pushedList struct {
	Name  string `json:"name"`
	Hosts []struct {
		IP   string `json:"ip"`
		Port int    `json:"port"`
	} `json:"hosts"`
}

func (l pushedList) ports() string {
	var out []string
	for _, h := range l.Hosts {
		out = append(out, strconv.Itoa(h.Port))
	}
	return strings.Join(out, " ")
}

// next reads and acks the next push (within wait).
func (u *udpSubscriber) next(wait time.Duration) (pushedList, error) {
	buf := make([]byte, 64<<10)
	u.conn.SetReadDeadline(time.Now().Add(wait))
	n, from, err := u.conn.ReadFromUDP(buf)
	if err != nil {
		return pushedList{}, err
	}
	b := buf[:n]
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return pushedList{}, err
		}
		if b, err = io.ReadAll(zr); err != nil {
			return pushedList{}, err
		}
	}
	var p struct {
		Type        string `json:"type"`
		Data        string `json:"data"`
		LastRefTime int64  `json:"lastRefTime"`
	}
	var l pushedList
	if err := json.Unmarshal(b, &p); err != nil || p.Type != "dom" {
		return l, fmt.Errorf("push %q: %v", b, err)
	}
	if err := json.Unmarshal([]byte(p.Data), &l); err != nil {
		return l, fmt.Errorf("push data %q: %v", p.Data, err)
	}
	ack := fmt.Sprintf(`{"type":"push-ack","lastRefTime":"%d","data":""}`, p.LastRefTime)
	_, err = u.conn.WriteToUDP([]byte(ack), from)
	return l, err
}

// until reads pushes until one lists ports want.
func (u *udpSubscriber) until(want string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var got []string
	for time.Now().Before(deadline) {
		l, err := u.next(time.Until(deadline))
		if err != nil {
			return fmt.Errorf("pushed %q, then %v; want %q", got, err, want)
		}
		if got = append(got, l.ports()); l.ports() == want {
			return nil
		}
	}
	return fmt.Errorf("pushed %q, want %q", got, want)
}

// A 1.x subscriber listing through agent 2 is pushed over UDP when a
// provider registers through agent 0, when it is disabled and when it
// deregisters: no poll. The provider is nacostest's client, not
// nacos-sdk-go: the SDK re-sends its first registration when its
// connection event is handled, which under load can come after the
// disabling registration and undo it (connection_event_listener.go,
// redoRegisterEachService), on a real Nacos server as here.
func TestUDPPushAcrossAgents(t *testing.T) {
	c, doors := cluster(t, 3)
	sub := newUDPSubscriber(t)
	sub.list(doors[2], dubboService)
	prov := nacostest.Dial(t, doors[0].GRPCAddr())
	p := dubboParam("10.0.0.5", 50051)
	in := nacoswire.Instance{IP: p.Ip, Port: int(p.Port), Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, Metadata: p.Metadata}
	if err := prov.Register(dubboService, in); err != nil {
		t.Fatalf("register: %v", err)
	}
	if err := sub.until("50051", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	in.Enabled = false
	if err := prov.Register(dubboService, in); err != nil {
		t.Fatalf("disable: %v", err)
	}
	if err := sub.until("", 10*time.Second); err != nil {
		t.Fatalf("after disabling: %v; tables: agent 0 %q, agent 2 %q", err,
			c.Agent(0).Table().URLs("org.apache.dubbo.demo.DemoService", ""), c.Agent(2).Table().URLs("org.apache.dubbo.demo.DemoService", ""))
	}
	in.Enabled = true
	if err := prov.Register(dubboService, in); err != nil {
		t.Fatalf("enable: %v", err)
	}
	if err := sub.until("50051", 10*time.Second); err != nil {
		t.Fatalf("after enabling: %v", err)
	}
	if err := prov.Deregister(dubboService, in); err != nil {
		t.Fatalf("deregister: %v", err)
	}
	if err := sub.until("", 10*time.Second); err != nil {
		t.Fatalf("after deregistering: %v", err)
	}
}

// nacos-sdk-go v1, a 1.x client that lists with udpPort and acks pushes
// from its PushReceiver, subscribed through agent 2: a provider
// registered through agent 0 reaches its callback well within its 10 s
// poll (the list's cacheMillis), so by the door's UDP push.
func TestUDPPushToNacosSDKGoV1(t *testing.T) {
	_, doors := cluster(t, 3)
	sub := namingClientV1(t, doors[2])
	got := make(chan string, 16)
	err := sub.Subscribe(&v1vo.SubscribeParam{ServiceName: dubboService, SubscribeCallback: func(svcs []v1model.SubscribeService, err error) {
		var ps []string
		for _, s := range svcs {
			ps = append(ps, strconv.FormatUint(s.Port, 10))
		}
		got <- strings.Join(ps, " ")
	}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if ok, err := namingClient(t, doors[0]).RegisterInstance(dubboParam("10.0.0.5", 50051)); !ok || err != nil {
		t.Fatalf("register: %v %v", ok, err)
	}
	timeout := time.After(5 * time.Second) // half the client's poll period
	for {
		select {
		case ps := <-got:
			if ps == "50051" {
				t.Logf("nacos-sdk-go v1 on agent 2 called back %v after the register on agent 0", time.Since(start))
				return
			}
		case <-timeout:
			t.Fatal("nacos-sdk-go v1 not called back with the provider within 5 s: no UDP push")
		}
	}
}

func namingClientV1(t testing.TB, s *nacos.Server) v1naming.INamingClient {
	t.Helper()
	_, hp, _ := net.SplitHostPort(s.Addr())
	port, _ := strconv.ParseUint(hp, 10, 64)
	dir := t.TempDir()
	nc, err := v1clients.NewNamingClient(v1vo.NacosClientParam{
		ClientConfig: v1constant.NewClientConfig(v1constant.WithTimeoutMs(5000), v1constant.WithNotLoadCacheAtStart(true),
			v1constant.WithUpdateCacheWhenEmpty(true), v1constant.WithLogDir(dir), v1constant.WithCacheDir(dir), v1constant.WithLogLevel("error")),
		ServerConfigs: []v1constant.ServerConfig{*v1constant.NewServerConfig("127.0.0.1", port)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return nc
}
