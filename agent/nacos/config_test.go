package nacos

import (
	"testing"

	"github.com/namecast/namecast/agent/nacos/nacoswire"
)

func cfgReq(dataID string) nacoswire.ConfigRequest {
	return nacoswire.ConfigRequest{DataID: dataID, Group: "dubbo"}
}

// Publish, query, CAS by MD5 and remove, with a listener pushed each change.
func TestConfigPublishCASListenRemove(t *testing.T) {
	s, _ := startServer(t)
	c, l := dial(t, s), dial(t, s)
	var q nacoswire.ConfigQueryResponse
	c.call(nacoswire.TypeConfigQuery, nacoswire.ConfigQueryRequest{ConfigRequest: cfgReq("app.properties")}, &q)
	if q.Success || q.ErrorCode != nacoswire.ConfigNotFound {
		t.Fatalf("absent config answered %+v", q)
	}
	var lr nacoswire.ConfigChangeBatchListenResponse
	l.call(nacoswire.TypeConfigBatchListen, nacoswire.ConfigBatchListenRequest{Listen: true,
		ConfigListenContexts: []nacoswire.ConfigListenContext{{DataID: "app.properties", Group: "dubbo", MD5: md5Hex("")}}}, &lr)
	if !lr.Success || len(lr.ChangedConfigs) != 0 {
		t.Fatalf("listen on an absent config: %+v", lr)
	}
	var r nacoswire.Response
	c.call(nacoswire.TypeConfigPublish, nacoswire.ConfigPublishRequest{ConfigRequest: cfgReq("app.properties"), Content: "a=1"}, &r)
	mustOK(t, "publish", r)
	var push nacoswire.ConfigChangeNotifyRequest
	l.NextPush(nacoswire.TypeConfigChangeNotify, &push)
	if push.DataID != "app.properties" || push.Group != "dubbo" {
		t.Fatalf("push %+v", push)
	}
	c.call(nacoswire.TypeConfigQuery, nacoswire.ConfigQueryRequest{ConfigRequest: cfgReq("app.properties")}, &q)
	if !q.Success || q.Content != "a=1" || q.MD5 != md5Hex("a=1") {
		t.Fatalf("query %+v", q)
	}
	c.call(nacoswire.TypeConfigPublish, nacoswire.ConfigPublishRequest{ConfigRequest: cfgReq("app.properties"), Content: "a=2", CasMD5: md5Hex("a=0")}, &r)
	if r.Success {
		t.Fatalf("CAS with a stale MD5 succeeded: %+v", r)
	}
	c.call(nacoswire.TypeConfigPublish, nacoswire.ConfigPublishRequest{ConfigRequest: cfgReq("app.properties"), Content: "a=2", CasMD5: md5Hex("a=1")}, &r)
	mustOK(t, "CAS publish", r)
	l.NextPush(nacoswire.TypeConfigChangeNotify, &push)
	l.call(nacoswire.TypeConfigBatchListen, nacoswire.ConfigBatchListenRequest{Listen: true,
		ConfigListenContexts: []nacoswire.ConfigListenContext{{DataID: "app.properties", Group: "dubbo", MD5: md5Hex("a=1")}}}, &lr)
	if len(lr.ChangedConfigs) != 1 {
		t.Fatalf("listen with an old MD5: %+v", lr)
	}
	c.call(nacoswire.TypeConfigRemove, nacoswire.ConfigRemoveRequest{ConfigRequest: cfgReq("app.properties")}, &r)
	mustOK(t, "remove", r)
	l.NextPush(nacoswire.TypeConfigChangeNotify, &push)
	c.call(nacoswire.TypeConfigQuery, nacoswire.ConfigQueryRequest{ConfigRequest: cfgReq("app.properties")}, &q)
	if q.ErrorCode != nacoswire.ConfigNotFound {
		t.Fatalf("removed config answered %+v", q)
	}
}
