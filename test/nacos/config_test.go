package nacos

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"

	"github.com/namecast/namecast/agent/nacos"

	"crypto/md5"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/vo"

	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// A config published through agent 0 reaches a listener on agent 1, as
// Dubbo's config centre listens; a CAS publish with a stale MD5 is refused
// and with the current one succeeds; a remove reaches the listener too.
func TestConfigPublishListenAcrossAgents(t *testing.T) {
	c, doors := cluster(t, 2)
	pub := configClient(t, doors[0])
	var mu sync.Mutex
	var got []string
	t0 := time.Now()
	startListener(t, doors[1], func(data string) {
		t.Logf("heard %q at %v", data, time.Since(t0))
		mu.Lock()
		got = append(got, data)
		mu.Unlock()
	})
	heard := func(want string) func() error {
		return func() error {
			mu.Lock()
			defer mu.Unlock()
			if len(got) == 0 || got[len(got)-1] != want {
				rule, ok := c.Agent(1).Table().Rule(routes.KVKey("nacos-config", "/dubbo/dubbo.properties"))
				return fmt.Errorf("listener heard %q, want %q last; agent 1 holds %v %+v", got, want, ok, rule.KV)
			}
			return nil
		}
	}
	if ok, err := pub.PublishConfig(vo.ConfigParam{DataId: "dubbo.properties", Group: "dubbo", Content: "timeout=1000"}); !ok || err != nil {
		t.Fatalf("publish: %v %v", ok, err)
	}
	testutil.Eventually(t, 15*time.Second, heard("timeout=1000"))
	if v, err := configClient(t, doors[1]).GetConfig(vo.ConfigParam{DataId: "dubbo.properties", Group: "dubbo"}); v != "timeout=1000" || err != nil {
		t.Fatalf("get on agent 1: %q %v", v, err)
	}
	// The client queries one config at most 5 times a second (its
	// limiter.go) and drops a refresh past that without retrying, so the
	// changes are a second apart, as a person's edits would be.
	pace := func() { <-time.After(1100 * time.Millisecond) }
	pace()
	if ok, _ := pub.PublishConfig(vo.ConfigParam{DataId: "dubbo.properties", Group: "dubbo", Content: "timeout=2000",
		CasMd5: md5Hex("timeout=0")}); ok {
		t.Fatal("a CAS publish with a stale MD5 succeeded")
	}
	if ok, err := pub.PublishConfig(vo.ConfigParam{DataId: "dubbo.properties", Group: "dubbo", Content: "timeout=2000",
		CasMd5: md5Hex("timeout=1000")}); !ok || err != nil {
		t.Fatalf("CAS publish with the current MD5: %v %v", ok, err)
	}
	testutil.Eventually(t, 15*time.Second, heard("timeout=2000"))
	pace()
	if ok, err := pub.DeleteConfig(vo.ConfigParam{DataId: "dubbo.properties", Group: "dubbo"}); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	testutil.Eventually(t, 15*time.Second, heard(""))
}

// startListener runs a config listener in its own process and calls heard
// with each change it prints. A process, because nacos-sdk-go v2.2.2's
// config client races with itself when a change is pushed (its
// ConfigChangeNotify handler and listen loop write one field unlocked),
// which the race detector would pin on this test.
func startListener(t *testing.T, door *nacos.Server, heard func(string)) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "NACOS_LISTENER="+door.Addr()+","+door.GRPCAddr(), "GORACE=report_on_exit=0 exitcode=0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); <-done })
	r := bufio.NewReader(out)
	if line, _ := r.ReadString('\n'); strings.TrimSpace(line) != "listening" {
		t.Fatalf("listener said %q", line)
	}
	go func() {
		defer close(done)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if v, err := strconv.Unquote(strings.TrimSpace(strings.TrimPrefix(line, "change "))); err == nil {
				heard(v)
			}
		}
	}()
}

// listener is the process startListener runs.
func listener(spec string) int {
	httpAddr, grpcAddr, _ := strings.Cut(spec, ",")
	dir, _ := os.MkdirTemp("", "nacos-listener")
	defer os.RemoveAll(dir)
	cc, err := clients.NewConfigClient(vo.NacosClientParam{ClientConfig: clientConfig(dir),
		ServerConfigs: serverConfigsFor(nil, httpAddr, grpcAddr)})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	var mu sync.Mutex
	err = cc.ListenConfig(vo.ConfigParam{DataId: "dubbo.properties", Group: "dubbo", OnChange: func(_, _, _, data string) {
		mu.Lock()
		fmt.Printf("change %q\n", data)
		mu.Unlock()
	}})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("listening")
	select {}
}
