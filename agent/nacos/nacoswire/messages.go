package nacoswire

// The JSON bodies, named as Metadata.type names them. Field names are the
// Java classes' bean properties (com.alibaba.nacos.api.*.remote.request
// and .response), which nacos-sdk-go v2 copies; decoders ignore fields they
// do not know, so a newer client's extra properties pass.

// Request types a client sends.
const (
	TypeServerCheck         = "ServerCheckRequest"
	TypeConnectionSetup     = "ConnectionSetupRequest"
	TypeHealthCheck         = "HealthCheckRequest"
	TypeInstance            = "InstanceRequest"
	TypePersistentInstance  = "PersistentInstanceRequest"
	TypeBatchInstance       = "BatchInstanceRequest"
	TypeServiceQuery        = "ServiceQueryRequest"
	TypeServiceList         = "ServiceListRequest"
	TypeSubscribeService    = "SubscribeServiceRequest"
	TypeConfigQuery         = "ConfigQueryRequest"
	TypeConfigPublish       = "ConfigPublishRequest"
	TypeConfigRemove        = "ConfigRemoveRequest"
	TypeConfigBatchListen   = "ConfigBatchListenRequest"
	TypeNotifySubscriber    = "NotifySubscriberRequest"   // pushed by the server
	TypeConfigChangeNotify  = "ConfigChangeNotifyRequest" // pushed by the server
	TypeClientDetection     = "ClientDetectionRequest"    // pushed by the server
	TypeErrorResponse       = "ErrorResponse"
	TypeServerCheckResponse = "ServerCheckResponse"
)

// InstanceRequest's Type values (NamingRemoteConstants).
const (
	RegisterInstance      = "registerInstance"
	DeregisterInstance    = "deregisterInstance"
	BatchRegisterInstance = "batchRegisterInstance"
)

// Result and error codes (com.alibaba.nacos.api.remote.response.ResponseCode,
// NacosException).
const (
	CodeSuccess = 200
	CodeFail    = 500

	ErrServerStatus   = 300 // server not ready: the client waits and retries
	ErrUnregistered   = 301 // the connection has not set up: the client reconnects
	ErrNoHandler      = 302 // unknown request type
	ErrInvalidParam   = 400
	ErrNoRight        = 403
	ErrNotFound       = 404
	ErrConflict       = 409
	ErrServer         = 500
	ErrOverThreshold  = 503
	ConfigNotFound    = 300 // ConfigQueryResponse: no such config
	ConfigQueryBusy   = 400 // ConfigQueryResponse: being modified
	ConfigCASMismatch = 400
)

// Response is every response's common part.
type Response struct {
	ResultCode int    `json:"resultCode"`
	ErrorCode  int    `json:"errorCode"`
	Success    bool   `json:"success"`
	Message    string `json:"message,omitempty"`
	RequestID  string `json:"requestId,omitempty"`
}

// OK is a successful Response.
func OK() Response { return Response{ResultCode: CodeSuccess, Success: true} }

// Fail is a failed Response with a Nacos error code.
func Fail(code int, msg string) Response {
	return Response{ResultCode: CodeFail, ErrorCode: code, Message: msg}
}

// Request is every request's common part.
type Request struct {
	RequestID string `json:"requestId,omitempty"`
	Module    string `json:"module,omitempty"`
}

// ConnectionSetupRequest opens a bi-stream.
type ConnectionSetupRequest struct {
	Request
	ClientVersion string            `json:"clientVersion"`
	Tenant        string            `json:"tenant"`
	Labels        map[string]string `json:"labels"`
}

// ServerCheckResponse carries the connection's id.
type ServerCheckResponse struct {
	Response
	ConnectionID string `json:"connectionId"`
}

// NamingRequest is every naming request's common part.
type NamingRequest struct {
	Request
	Namespace   string `json:"namespace"`
	ServiceName string `json:"serviceName"`
	GroupName   string `json:"groupName"`
}

// Instance is com.alibaba.nacos.api.naming.pojo.Instance.
type Instance struct {
	InstanceID  string            `json:"instanceId,omitempty"`
	IP          string            `json:"ip"`
	Port        int               `json:"port"`
	Weight      float64           `json:"weight"`
	Healthy     bool              `json:"healthy"`
	Enabled     bool              `json:"enabled"`
	Ephemeral   bool              `json:"ephemeral"`
	ClusterName string            `json:"clusterName"`
	ServiceName string            `json:"serviceName,omitempty"`
	Metadata    map[string]string `json:"metadata"`
}

// InstanceRequest registers or deregisters one instance (PersistentInstanceRequest has the same shape).
type InstanceRequest struct {
	NamingRequest
	Type     string   `json:"type"`
	Instance Instance `json:"instance"`
}

// BatchInstanceRequest registers a connection's instances of one service at once.
type BatchInstanceRequest struct {
	NamingRequest
	Type      string     `json:"type"`
	Instances []Instance `json:"instances"`
}

// InstanceResponse answers both.
type InstanceResponse struct {
	Response
	Type string `json:"type,omitempty"`
}

// ServiceQueryRequest asks for a service's instances.
type ServiceQueryRequest struct {
	NamingRequest
	Cluster     string `json:"cluster"`
	HealthyOnly bool   `json:"healthyOnly"`
	UDPPort     int    `json:"udpPort"`
}

// ServiceListRequest pages through a group's service names.
type ServiceListRequest struct {
	NamingRequest
	PageNo   int    `json:"pageNo"`
	PageSize int    `json:"pageSize"`
	Selector string `json:"selector"`
}

// ServiceListResponse answers it.
type ServiceListResponse struct {
	Response
	Count        int      `json:"count"`
	ServiceNames []string `json:"serviceNames"`
}

// SubscribeServiceRequest subscribes (or unsubscribes) the connection.
type SubscribeServiceRequest struct {
	NamingRequest
	Subscribe bool   `json:"subscribe"`
	Clusters  string `json:"clusters"`
}

// ServiceInfo is com.alibaba.nacos.api.naming.pojo.ServiceInfo: Name is
// the service name without its group.
type ServiceInfo struct {
	Name                     string     `json:"name"`
	GroupName                string     `json:"groupName"`
	Clusters                 string     `json:"clusters"`
	CacheMillis              int64      `json:"cacheMillis"`
	Hosts                    []Instance `json:"hosts"`
	LastRefTime              int64      `json:"lastRefTime"`
	Checksum                 string     `json:"checksum"`
	AllIPs                   bool       `json:"allIPs"`
	ReachProtectionThreshold bool       `json:"reachProtectionThreshold"`
	Valid                    bool       `json:"valid"`
}

// ServiceInfoResponse is QueryServiceResponse and SubscribeServiceResponse.
type ServiceInfoResponse struct {
	Response
	ServiceInfo ServiceInfo `json:"serviceInfo"`
}

// NotifySubscriberRequest is pushed when a subscribed service changes.
type NotifySubscriberRequest struct {
	NamingRequest
	ServiceInfo ServiceInfo `json:"serviceInfo"`
}

// ConfigRequest is every config request's common part; Tenant is the namespace.
type ConfigRequest struct {
	Request
	DataID string `json:"dataId"`
	Group  string `json:"group"`
	Tenant string `json:"tenant"`
}

// ConfigQueryRequest reads one config.
type ConfigQueryRequest struct {
	ConfigRequest
	Tag string `json:"tag,omitempty"`
}

// ConfigQueryResponse answers it; ErrorCode ConfigNotFound when absent.
type ConfigQueryResponse struct {
	Response
	Content          string `json:"content"`
	EncryptedDataKey string `json:"encryptedDataKey"`
	ContentType      string `json:"contentType"`
	MD5              string `json:"md5"`
	LastModified     int64  `json:"lastModified"`
	IsBeta           bool   `json:"isBeta"`
	Tag              bool   `json:"tag"`
}

// ConfigPublishRequest writes one config; a non-empty CasMD5 makes it a
// compare-and-set against the current content's MD5.
type ConfigPublishRequest struct {
	ConfigRequest
	Content     string            `json:"content"`
	CasMD5      string            `json:"casMd5"`
	AdditionMap map[string]string `json:"additionMap"`
}

// ConfigRemoveRequest deletes one config.
type ConfigRemoveRequest struct {
	ConfigRequest
	Tag string `json:"tag,omitempty"`
}

// ConfigListenContext is one listened config with the MD5 the client has.
type ConfigListenContext struct {
	DataID string `json:"dataId"`
	Group  string `json:"group"`
	Tenant string `json:"tenant"`
	MD5    string `json:"md5"`
}

// ConfigBatchListenRequest adds (Listen) or removes listeners.
type ConfigBatchListenRequest struct {
	ConfigRequest
	Listen               bool                  `json:"listen"`
	ConfigListenContexts []ConfigListenContext `json:"configListenContexts"`
}

// ConfigContext names one config.
type ConfigContext struct {
	DataID string `json:"dataId"`
	Group  string `json:"group"`
	Tenant string `json:"tenant"`
}

// ConfigChangeBatchListenResponse lists the listened configs whose MD5 differs.
type ConfigChangeBatchListenResponse struct {
	Response
	ChangedConfigs []ConfigContext `json:"changedConfigs"`
}

// ConfigChangeNotifyRequest is pushed when a listened config changes.
type ConfigChangeNotifyRequest struct {
	ConfigRequest
}

// ResponseType names the response class of a request type.
func ResponseType(requestType string) string {
	switch requestType {
	case TypeServerCheck:
		return TypeServerCheckResponse
	case TypeHealthCheck:
		return "HealthCheckResponse"
	case TypeInstance, TypePersistentInstance:
		return "InstanceResponse"
	case TypeBatchInstance:
		return "BatchInstanceResponse"
	case TypeServiceQuery:
		return "QueryServiceResponse"
	case TypeServiceList:
		return "ServiceListResponse"
	case TypeSubscribeService:
		return "SubscribeServiceResponse"
	case TypeConfigQuery:
		return "ConfigQueryResponse"
	case TypeConfigPublish:
		return "ConfigPublishResponse"
	case TypeConfigRemove:
		return "ConfigRemoveResponse"
	case TypeConfigBatchListen:
		return "ConfigChangeBatchListenResponse"
	case TypeNotifySubscriber:
		return "NotifySubscriberResponse"
	case TypeConfigChangeNotify:
		return "ConfigChangeNotifyResponse"
	case TypeClientDetection:
		return "ClientDetectionResponse"
	}
	return TypeErrorResponse
}
