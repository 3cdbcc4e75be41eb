package nacos

import (
	"log/slog"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/clients/config_client"
	"github.com/nacos-group/nacos-sdk-go/v2/clients/naming_client"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"

	"github.com/namecast/namecast/agent"
	"github.com/namecast/namecast/agent/agenttest"
	"github.com/namecast/namecast/agent/nacos"
	"github.com/namecast/namecast/internal/testutil"
)

// grace is the doors' grace in these tests: a dead client's instances go
// this long after its connection.
const grace = 500 * time.Millisecond

// cluster starts n agents, each serving the Nacos door as the agent
// starts it (--nacos, on 127.0.0.1:0 in agenttest) with grace as its grace
// (the agent's --nacos-grace), and returns the doors.
func cluster(t *testing.T, n int) (*agenttest.Cluster, []*nacos.Server) {
	t.Helper()
	// The agents' debug log, shown when the test fails.
	var buf testutil.Buffer
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("NAMECAST_TEST_LOG") != "" {
			t.Logf("the agents' log:\n%s", buf.String())
		}
	})
	c := agenttest.Start(t, n, func(cfg *agent.Config) {
		cfg.NacosGrace = agent.Duration(grace)
		cfg.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	doors := make([]*nacos.Server, n)
	for i := range n {
		if doors[i] = agent.Door[*nacos.Server](c.Agent(i)); doors[i] == nil {
			t.Fatalf("agent %d serves no Nacos door", i)
		}
	}
	return c, doors
}

func serverConfigs(t testing.TB, s *nacos.Server) []constant.ServerConfig {
	t.Helper()
	return serverConfigsFor(t, s.Addr(), s.GRPCAddr())
}

func serverConfigsFor(t testing.TB, httpAddr, grpcAddr string) []constant.ServerConfig {
	_, hp, _ := net.SplitHostPort(httpAddr)
	_, gp, _ := net.SplitHostPort(grpcAddr)
	port, _ := strconv.ParseUint(hp, 10, 64)
	gport, _ := strconv.ParseUint(gp, 10, 64)
	return []constant.ServerConfig{*constant.NewServerConfig("127.0.0.1", port, constant.WithGrpcPort(gport))}
}

func clientConfig(dir string) *constant.ClientConfig {
	return constant.NewClientConfig(constant.WithTimeoutMs(5000), constant.WithNotLoadCacheAtStart(true),
		constant.WithUpdateCacheWhenEmpty(true), constant.WithLogDir(dir), constant.WithCacheDir(dir),
		constant.WithLogLevel("error"))
}

func namingClient(t *testing.T, s *nacos.Server) naming_client.INamingClient {
	t.Helper()
	nc, err := clients.NewNamingClient(vo.NacosClientParam{ClientConfig: clientConfig(t.TempDir()), ServerConfigs: serverConfigs(t, s)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.CloseClient)
	return nc
}

func configClient(t *testing.T, s *nacos.Server) config_client.IConfigClient {
	t.Helper()
	cc, err := clients.NewConfigClient(vo.NacosClientParam{ClientConfig: clientConfig(t.TempDir()), ServerConfigs: serverConfigs(t, s)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.CloseClient)
	return cc
}
