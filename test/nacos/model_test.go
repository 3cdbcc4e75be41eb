package nacos

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/model"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"

	"github.com/namecast/namecast/internal/testutil"
)

func ports(insts []model.Instance) string {
	var out []string
	for _, in := range insts {
		out = append(out, fmt.Sprintf("%d/w%g", in.Port, in.Weight))
	}
	return strings.Join(out, " ")
}

// A disabled instance and one of weight 0, registered through agent 0
// with nacos-sdk-go: a subscriber and a query on agent 2 are served the
// enabled one only, with its weight 0 kept, so the SDK's own selection
// (SelectOneHealthyInstance, which skips weight 0) never picks it. One
// registered under Dubbo's name whose metadata lacks version is listed
// under that name; a persistent instance of an ephemeral service is
// refused with Nacos' error (the SDK reports its HTTP 400 only).
func TestInstanceModelAcrossAgents(t *testing.T) {
	_, doors := cluster(t, 3)
	sub := namingClient(t, doors[2])
	var l latest
	if err := sub.Subscribe(&vo.SubscribeParam{ServiceName: dubboService, SubscribeCallback: l.callback}); err != nil {
		t.Fatal(err)
	}
	// One client per instance: a Nacos 2.x client holds one instance per
	// service.
	live, off, zero, unversioned := dubboParam("10.0.0.1", 1), dubboParam("10.0.0.2", 2), dubboParam("10.0.0.3", 3), dubboParam("10.0.0.4", 4)
	off.Enable = false
	zero.Weight = 0
	delete(unversioned.Metadata, "version")
	for i, p := range []vo.RegisterInstanceParam{live, off, zero, unversioned} {
		if ok, err := namingClient(t, doors[i%2]).RegisterInstance(p); !ok || err != nil {
			t.Fatalf("register %s: %v %v", p.Ip, ok, err)
		}
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		if got := ports(l.insts); got != "1/w1 3/w0 4/w1" {
			return fmt.Errorf("subscriber on agent 2 holds %q after %d callbacks, want 1/w1 3/w0 4/w1", got, len(l.told))
		}
		return nil
	})
	insts, err := sub.SelectAllInstances(vo.SelectAllInstancesParam{ServiceName: dubboService})
	if err != nil || ports(insts) != "1/w1 3/w0 4/w1" {
		t.Fatalf("select all on agent 2: %q %v", ports(insts), err)
	}
	for range 20 {
		in, err := sub.SelectOneHealthyInstance(vo.SelectOneHealthInstanceParam{ServiceName: dubboService})
		if err != nil || in.Port == 3 || in.Port == 2 {
			t.Fatalf("select one healthy on agent 2: %+v %v", in, err)
		}
	}
	per := dubboParam("10.0.0.9", 9)
	per.Ephemeral = false
	ok, err := namingClient(t, doors[1]).RegisterInstance(per)
	if ok || err == nil || !strings.Contains(err.Error(), "error code 400") {
		t.Fatalf("persistent into an ephemeral service: %v %v", ok, err)
	}
}
