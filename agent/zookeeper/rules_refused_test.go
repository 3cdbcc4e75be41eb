package zookeeper

import (
	"errors"
	"fmt"
	"testing"

	"github.com/namecast/namecast/agent/zookeeper/zkwire"
	"github.com/namecast/namecast/routes"
)

// A persistent create, setData or delete the agent refuses answers the
// error code a client understands and changes nothing: QUOTAEXCEEDED past
// the agent's bound on rules, SYSTEMERROR when its data dir cannot save
// the change. Before, the door ignored the outcome and answered OK.
func TestPersistentWriteRefusedByTheAgent(t *testing.T) {
	s, reg := startServer(t)
	r := dialRaw(t, s)
	r.handshake(false)
	if h, _, _ := r.call(1, zkwire.OpCreate, &zkwire.CreateRequest{Path: "/p", Data: []byte("1"), ACL: openACL}); h.Err != 0 {
		t.Fatalf("create: err %d", h.Err)
	}
	for _, tc := range []struct {
		err  error
		code int32
	}{
		{fmt.Errorf("%w: over the limit", routes.ErrRulesFull), zkwire.ErrQuotaExceeded},
		{errors.New("saving the rule to the data dir failed: no space left on device"), zkwire.ErrSystem},
	} {
		reg.RulesErr.Store(&tc.err)
		if h, _, _ := r.call(2, zkwire.OpCreate, &zkwire.CreateRequest{Path: "/q", Data: []byte("1"), ACL: openACL}); h.Err != tc.code {
			t.Errorf("create refused with %v: err %d, want %d", tc.err, h.Err, tc.code)
		}
		if h, _, _ := r.call(3, zkwire.OpSetData, &zkwire.SetDataRequest{Path: "/p", Data: []byte("2"), Version: -1}); h.Err != tc.code {
			t.Errorf("setData refused with %v: err %d, want %d", tc.err, h.Err, tc.code)
		}
		if h, _, _ := r.call(4, zkwire.OpDelete, &zkwire.PathVersion{Path: "/p", Version: -1}); h.Err != tc.code {
			t.Errorf("delete refused with %v: err %d, want %d", tc.err, h.Err, tc.code)
		}
	}
	reg.RulesErr.Store(nil)
	h, d, _ := r.call(5, zkwire.OpGetData, &zkwire.PathWatch{Path: "/p"})
	if h.Err != 0 {
		t.Fatalf("getData after refused writes: err %d", h.Err)
	}
	var got zkwire.GetDataResponse
	got.Decode(d)
	if string(got.Data) != "1" || got.Stat.Version != 0 {
		t.Fatalf("after refused writes /p holds %q version %d", got.Data, got.Stat.Version)
	}
	if h, _, _ := r.call(6, zkwire.OpExists, &zkwire.PathWatch{Path: "/q"}); h.Err != zkwire.ErrNoNode {
		t.Fatalf("refused create made /q: err %d", h.Err)
	}
}
