package nacoswire

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// update rewrites testdata/golden from the encoder. test/nacos checks every
// file there against the real client's protobuf code (nacos-sdk-go v2.2.2),
// so a file written by this flag is still compared with Nacos' own encoding.
var update = flag.Bool("update", false, "rewrite testdata/golden from the encoder")

// golden is one worked frame: a Payload whose body is v's JSON.
type golden struct {
	name    string
	typ     string
	headers map[string]string
	v       any
	zero    func() any // a zero value of v's type, for the round trip
}

var dubboInstance = Instance{IP: "10.0.0.5", Port: 20880, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true,
	ClusterName: "DEFAULT", Metadata: map[string]string{"protocol": "dubbo", "path": "demo.Api", "interface": "demo.Api",
		"side": "provider", "category": "providers", "version": "1.0.0"}}

func naming(service string) NamingRequest {
	return NamingRequest{Request: Request{RequestID: "7", Module: "naming"}, Namespace: "public",
		ServiceName: service, GroupName: "DEFAULT_GROUP"}
}

func config(dataID string) ConfigRequest {
	return ConfigRequest{Request: Request{RequestID: "8", Module: "config"}, DataID: dataID, Group: "dubbo", Tenant: ""}
}

const dubboService = "providers:demo.Api:1.0.0:"

func goldens() []golden {
	info := ServiceInfo{Name: dubboService, GroupName: "DEFAULT_GROUP", CacheMillis: 10000,
		Hosts: []Instance{dubboInstance}, LastRefTime: 1735689600000, Valid: true}
	return []golden{
		{name: "server_check", typ: TypeServerCheck, v: &Request{RequestID: "1", Module: "internal"},
			zero: func() any { return &Request{} }},
		{name: "server_check_response", typ: TypeServerCheckResponse,
			v:    &ServerCheckResponse{Response: OK(), ConnectionID: "1735689600000_127.0.0.1_50312"},
			zero: func() any { return &ServerCheckResponse{} }},
		{name: "connection_setup", typ: TypeConnectionSetup, headers: map[string]string{"app": "demo"},
			v: &ConnectionSetupRequest{Request: Request{Module: "internal"}, ClientVersion: "Nacos-Go-Client:v2.2.2",
				Labels: map[string]string{"source": "sdk", "module": "naming"}},
			zero: func() any { return &ConnectionSetupRequest{} }},
		{name: "health_check", typ: TypeHealthCheck, v: &Request{RequestID: "2", Module: "internal"},
			zero: func() any { return &Request{} }},
		{name: "instance_register", typ: TypeInstance, headers: map[string]string{"app": "demo"},
			v:    &InstanceRequest{NamingRequest: naming(dubboService), Type: RegisterInstance, Instance: dubboInstance},
			zero: func() any { return &InstanceRequest{} }},
		{name: "instance_deregister", typ: TypeInstance,
			v:    &InstanceRequest{NamingRequest: naming(dubboService), Type: DeregisterInstance, Instance: dubboInstance},
			zero: func() any { return &InstanceRequest{} }},
		{name: "instance_response", typ: "InstanceResponse", v: &InstanceResponse{Response: OK(), Type: RegisterInstance},
			zero: func() any { return &InstanceResponse{} }},
		{name: "persistent_instance", typ: TypePersistentInstance,
			v: &InstanceRequest{NamingRequest: naming("orders"), Type: RegisterInstance,
				Instance: Instance{IP: "10.0.0.7", Port: 8080, Weight: 1, Healthy: true, Enabled: true, ClusterName: "DEFAULT"}},
			zero: func() any { return &InstanceRequest{} }},
		{name: "batch_instance", typ: TypeBatchInstance,
			v: &BatchInstanceRequest{NamingRequest: naming("orders"), Type: BatchRegisterInstance,
				Instances: []Instance{{IP: "10.0.0.7", Port: 8080, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: "DEFAULT"},
					{IP: "10.0.0.7", Port: 8081, Weight: 2, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: "east"}}},
			zero: func() any { return &BatchInstanceRequest{} }},
		{name: "service_query", typ: TypeServiceQuery,
			v:    &ServiceQueryRequest{NamingRequest: naming(dubboService), Cluster: "DEFAULT", HealthyOnly: false},
			zero: func() any { return &ServiceQueryRequest{} }},
		{name: "query_service_response", typ: "QueryServiceResponse", v: &ServiceInfoResponse{Response: OK(), ServiceInfo: info},
			zero: func() any { return &ServiceInfoResponse{} }},
		{name: "service_list", typ: TypeServiceList,
			v:    &ServiceListRequest{NamingRequest: naming(""), PageNo: 1, PageSize: 10},
			zero: func() any { return &ServiceListRequest{} }},
		{name: "service_list_response", typ: "ServiceListResponse",
			v:    &ServiceListResponse{Response: OK(), Count: 2, ServiceNames: []string{dubboService, "orders"}},
			zero: func() any { return &ServiceListResponse{} }},
		{name: "subscribe_service", typ: TypeSubscribeService, headers: map[string]string{"app": "demo"},
			v:    &SubscribeServiceRequest{NamingRequest: naming(dubboService), Subscribe: true, Clusters: ""},
			zero: func() any { return &SubscribeServiceRequest{} }},
		{name: "notify_subscriber", typ: TypeNotifySubscriber,
			v:    &NotifySubscriberRequest{NamingRequest: naming(dubboService), ServiceInfo: info},
			zero: func() any { return &NotifySubscriberRequest{} }},
		{name: "config_query", typ: TypeConfigQuery, v: &ConfigQueryRequest{ConfigRequest: config("dubbo.properties")},
			zero: func() any { return &ConfigQueryRequest{} }},
		{name: "config_query_response", typ: "ConfigQueryResponse",
			v: &ConfigQueryResponse{Response: OK(), Content: "a=1", ContentType: "text",
				MD5: "1c28f8c0c8a4a8d3e0f5f3ac3a6a3e38", LastModified: 1735689600000},
			zero: func() any { return &ConfigQueryResponse{} }},
		{name: "config_query_not_found", typ: "ConfigQueryResponse",
			v:    &ConfigQueryResponse{Response: Fail(ConfigNotFound, "config data not exist")},
			zero: func() any { return &ConfigQueryResponse{} }},
		{name: "config_publish_cas", typ: TypeConfigPublish,
			v: &ConfigPublishRequest{ConfigRequest: config("dubbo.properties"), Content: "a=2",
				CasMD5: "1c28f8c0c8a4a8d3e0f5f3ac3a6a3e38", AdditionMap: map[string]string{"type": "properties"}},
			zero: func() any { return &ConfigPublishRequest{} }},
		{name: "config_remove", typ: TypeConfigRemove, v: &ConfigRemoveRequest{ConfigRequest: config("dubbo.properties")},
			zero: func() any { return &ConfigRemoveRequest{} }},
		{name: "config_batch_listen", typ: TypeConfigBatchListen,
			v: &ConfigBatchListenRequest{ConfigRequest: config(""), Listen: true,
				ConfigListenContexts: []ConfigListenContext{{DataID: "dubbo.properties", Group: "dubbo", MD5: "1c28f8c0c8a4a8d3e0f5f3ac3a6a3e38"}}},
			zero: func() any { return &ConfigBatchListenRequest{} }},
		{name: "config_change_batch_listen_response", typ: "ConfigChangeBatchListenResponse",
			v:    &ConfigChangeBatchListenResponse{Response: OK(), ChangedConfigs: []ConfigContext{{DataID: "dubbo.properties", Group: "dubbo"}}},
			zero: func() any { return &ConfigChangeBatchListenResponse{} }},
		{name: "config_change_notify", typ: TypeConfigChangeNotify,
			v:    &ConfigChangeNotifyRequest{ConfigRequest: config("dubbo.properties")},
			zero: func() any { return &ConfigChangeNotifyRequest{} }},
		{name: "error_response", typ: TypeErrorResponse, v: &Response{ResultCode: CodeFail, ErrorCode: ErrUnregistered, Message: "connection is not set up"},
			zero: func() any { return &Response{} }},
	}
}

func (g golden) payload() *Payload {
	body, err := json.Marshal(g.v)
	if err != nil {
		panic(err)
	}
	return &Payload{Type: g.typ, ClientIP: "10.0.0.9", Headers: g.headers, Body: body}
}

// frame is the golden as it travels: one gRPC message holding the Payload.
func (g golden) frame() []byte { return AppendMessage(nil, g.payload().Marshal()) }

func TestGoldenFrames(t *testing.T) {
	for _, g := range goldens() {
		t.Run(g.name, func(t *testing.T) {
			path := filepath.Join("testdata", "golden", g.name+".bin")
			got := g.frame()
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("encoding differs from %s:\n got %x\nwant %x", path, got, want)
			}
			msg, err := ReadMessage(bytes.NewReader(want), MaxMessage)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Unmarshal(msg)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p, g.payload()) {
				t.Fatalf("decoded %+v, want %+v", p, g.payload())
			}
			v := g.zero()
			if err := json.Unmarshal(p.Body, v); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v, g.v) {
				t.Fatalf("body decoded as %+v, want %+v", v, g.v)
			}
		})
	}
}

// Every request type the door answers has a golden frame.
func TestEveryRequestTypeHasAGolden(t *testing.T) {
	have := map[string]bool{}
	for _, g := range goldens() {
		have[g.typ] = true
	}
	for _, typ := range []string{TypeServerCheck, TypeConnectionSetup, TypeHealthCheck, TypeInstance, TypePersistentInstance,
		TypeBatchInstance, TypeServiceQuery, TypeServiceList, TypeSubscribeService, TypeConfigQuery, TypeConfigPublish,
		TypeConfigRemove, TypeConfigBatchListen, TypeNotifySubscriber, TypeConfigChangeNotify} {
		if !have[typ] {
			t.Errorf("no golden frame for %s", typ)
		}
		if typ != TypeConnectionSetup && ResponseType(typ) == TypeErrorResponse {
			t.Errorf("%s has no response type", typ)
		}
	}
}
