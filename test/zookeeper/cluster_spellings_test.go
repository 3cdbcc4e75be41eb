package zookeeper

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// One Dubbo URL spelled two ways (parameters in another order) names one
// node here: a client on agent 1 watching both spellings gets an event on
// each, with the path it asked with, when the node is deleted through
// agent 0 (issue 23 item 6: only the first spelling's watch fired).
func TestWatchesOnTwoSpellingsFireAcrossAgents(t *testing.T) {
	c := cluster(t, 2)
	w := connect(t, zkAddr(t, c, 0), 10*time.Second)
	r := connect(t, zkAddr(t, c, 1), 10*time.Second)
	dir := "/dubbo/demo.Api/providers"
	mkdirs(t, w, dir)
	za := javaEncode("dubbo://10.0.0.5:20880/demo.Api?z=1&a=2")
	az := javaEncode("dubbo://10.0.0.5:20880/demo.Api?a=2&z=1")
	if _, err := w.Create(dir+"/"+za, []byte("10.0.0.5"), zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		if ok, _, err := r.Exists(dir + "/" + za); err != nil || !ok {
			return errf("not on agent 1 yet: %v", err)
		}
		return nil
	})
	var evs []<-chan zk.Event
	for _, name := range []string{za, az} {
		_, _, ch, err := r.GetW(dir + "/" + name)
		if err != nil {
			t.Fatalf("getW %s: %v", name, err)
		}
		evs = append(evs, ch)
	}
	if err := w.Delete(dir+"/"+za, -1); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, evs[0], zk.EventNodeDeleted, dir+"/"+za)
	waitEvent(t, evs[1], zk.EventNodeDeleted, dir+"/"+az)
}
