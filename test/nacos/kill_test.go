package nacos

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"

	"github.com/namecast/namecast/internal/testutil"
)

// TestMain lets the test binary be the provider process the kill test
// kills: with NACOS_PROVIDER set it registers through the named door,
// prints "registered" and waits to be killed.
func TestMain(m *testing.M) {
	if spec := os.Getenv("NACOS_PROVIDER"); spec != "" {
		os.Exit(provider(spec))
	}
	if spec := os.Getenv("NACOS_LISTENER"); spec != "" {
		os.Exit(listener(spec))
	}
	os.Exit(m.Run())
}

func provider(spec string) int {
	httpAddr, grpcAddr, _ := strings.Cut(spec, ",")
	dir, _ := os.MkdirTemp("", "nacos-provider")
	defer os.RemoveAll(dir)
	nc, err := clients.NewNamingClient(vo.NacosClientParam{ClientConfig: clientConfig(dir),
		ServerConfigs: serverConfigsFor(nil, httpAddr, grpcAddr)})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if ok, err := nc.RegisterInstance(dubboParam("10.0.0.77", 50051)); !ok || err != nil {
		fmt.Println("error:", ok, err)
		return 1
	}
	fmt.Println("registered")
	select {}
}

// A provider process killed -9 loses its instances on every agent within
// the grace (plus gossip), and a subscriber on the other agent is told.
func TestKilledClientInstancesGoFromEveryAgent(t *testing.T) {
	c, doors := cluster(t, 2)
	sub := namingClient(t, doors[1])
	var l latest
	if err := sub.Subscribe(&vo.SubscribeParam{ServiceName: dubboService, SubscribeCallback: l.callback}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "NACOS_PROVIDER="+doors[0].Addr()+","+doors[0].GRPCAddr())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "registered" {
		t.Fatalf("provider said %q", line)
	}
	testutil.Eventually(t, 10*time.Second, l.is("[10.0.0.77:50051]"))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	testutil.Eventually(t, 10*time.Second, func() error {
		for i := range 2 {
			if got := c.Agent(i).Table().URLs("org.apache.dubbo.demo.DemoService", ""); len(got) != 0 {
				return fmt.Errorf("agent %d still lists %q", i, got)
			}
		}
		return l.is("[]")()
	})
	took := time.Since(killed)
	t.Logf("killed -9 -> gone from both agents and the subscriber told in %v (grace %v)", took.Round(time.Millisecond), grace)
	if took < grace {
		t.Fatalf("gone after %v, before the %v grace", took, grace)
	}
}
