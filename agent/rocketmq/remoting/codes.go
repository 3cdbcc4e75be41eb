package remoting

import "strconv"

// Request codes a NameServer serves (§2.1). Command.Code holds them on
// requests; they are untyped so they compare with it directly.
const (
	PutKVConfig                   = 100
	GetKVConfig                   = 101
	DeleteKVConfig                = 102
	RegisterBroker                = 103
	UnregisterBroker              = 104
	GetRouteInfoByTopic           = 105
	GetBrokerClusterInfo          = 106
	WipeWritePermOfBroker         = 205
	GetAllTopicListFromNameServer = 206
	DeleteTopicInNamesrv          = 216
	RegisterTopicInNamesrv        = 217
	GetKVListByNamespace          = 219
	GetTopicsByCluster            = 224
	GetSystemTopicListFromNS      = 304
	GetUnitTopicList              = 311
	GetHasUnitSubTopicList        = 312
	GetHasUnitSubUnunitTopicList  = 313
	UpdateNamesrvConfig           = 318
	GetNamesrvConfig              = 319
	QueryDataVersion              = 322
	AddWritePermOfBroker          = 327
	GetBrokerMemberGroup          = 901
	BrokerHeartbeat               = 904
	NotifyMinBrokerIDChange       = 905
)

// Response codes (§2.2). A NameServer only ever answers Success,
// SystemError, SystemBusy, RequestCodeNotSupported, NoPermission,
// TopicNotExist and QueryNotFound; the others are listed so that logs can
// name what a peer sent.
const (
	Success                   = 0
	SystemError               = 1
	SystemBusy                = 2
	RequestCodeNotSupported   = 3
	TransactionFailed         = 4
	FlushDiskTimeout          = 10
	SlaveNotAvailable         = 11
	FlushSlaveTimeout         = 12
	MessageIllegal            = 13
	ServiceNotAvailable       = 14
	VersionNotSupported       = 15
	NoPermission              = 16
	TopicNotExist             = 17
	TopicExistAlready         = 18
	PullNotFound              = 19
	PullRetryImmediately      = 20
	PullOffsetMoved           = 21
	QueryNotFound             = 22
	SubscriptionParseFailed   = 23
	SubscriptionNotExist      = 24
	SubscriptionNotLatest     = 25
	SubscriptionGroupNotExist = 26
	FilterDataNotExist        = 27
	FilterDataNotLatest       = 28
	InvalidParameter          = 29
	NotLeaderForQueue         = 501
	IllegalOperation          = 604
	GoAway                    = 1500
)

// Protocol versions (MQVersion ordinals, §1.7) at which the wire changes,
// named by what changes.
const (
	// VersionRegisterBody (V3_0_11): from here REGISTER_BROKER carries a
	// RegisterBrokerBody; older brokers send a bare topic-config wrapper.
	VersionRegisterBody = 37
	// VersionGoClient (V4_5_2) is what rocketmq-client-go v2.1.x sends.
	VersionGoClient = 317
	// VersionStandardJSON (V4_9_4): clients from here on get route bodies
	// with quoted broker-id keys; older ones need [LegacyJSON].
	VersionStandardJSON = 401
	// VersionStaticTopics (V5_0_0): compressed registrations carry a
	// static-topic mapping section after the filter-server list.
	VersionStaticTopics = 413
	// VersionCurrent (V5_3_3) is what we put in our responses: a current
	// Java NameServer's value, and above every threshold clients check.
	VersionCurrent = 479
)

// Permission bits of QueueData.Perm and TopicConfig.Perm (§3.2).
const (
	PermInherit  = 1
	PermWrite    = 2
	PermRead     = 4
	PermPriority = 8
)

// Bits of QueueData.TopicSysFlag (§3.2).
const (
	TopicSysFlagUnit    = 1
	TopicSysFlagUnitSub = 2
)

var codeNames = map[int]string{
	PutKVConfig:                   "PUT_KV_CONFIG",
	GetKVConfig:                   "GET_KV_CONFIG",
	DeleteKVConfig:                "DELETE_KV_CONFIG",
	RegisterBroker:                "REGISTER_BROKER",
	UnregisterBroker:              "UNREGISTER_BROKER",
	GetRouteInfoByTopic:           "GET_ROUTEINFO_BY_TOPIC",
	GetBrokerClusterInfo:          "GET_BROKER_CLUSTER_INFO",
	WipeWritePermOfBroker:         "WIPE_WRITE_PERM_OF_BROKER",
	GetAllTopicListFromNameServer: "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
	DeleteTopicInNamesrv:          "DELETE_TOPIC_IN_NAMESRV",
	RegisterTopicInNamesrv:        "REGISTER_TOPIC_IN_NAMESRV",
	GetKVListByNamespace:          "GET_KVLIST_BY_NAMESPACE",
	GetTopicsByCluster:            "GET_TOPICS_BY_CLUSTER",
	GetSystemTopicListFromNS:      "GET_SYSTEM_TOPIC_LIST_FROM_NS",
	GetUnitTopicList:              "GET_UNIT_TOPIC_LIST",
	GetHasUnitSubTopicList:        "GET_HAS_UNIT_SUB_TOPIC_LIST",
	GetHasUnitSubUnunitTopicList:  "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST",
	UpdateNamesrvConfig:           "UPDATE_NAMESRV_CONFIG",
	GetNamesrvConfig:              "GET_NAMESRV_CONFIG",
	QueryDataVersion:              "QUERY_DATA_VERSION",
	AddWritePermOfBroker:          "ADD_WRITE_PERM_OF_BROKER",
	GetBrokerMemberGroup:          "GET_BROKER_MEMBER_GROUP",
	BrokerHeartbeat:               "BROKER_HEARTBEAT",
	NotifyMinBrokerIDChange:       "NOTIFY_MIN_BROKER_ID_CHANGE",
}

// RequestName returns Java's name for a request code, or "CODE_<n>" for
// codes this package does not list, so that it is usable as a bounded
// metrics label.
func RequestName(code int) string {
	if n, ok := codeNames[code]; ok {
		return n
	}
	return "CODE_" + strconv.Itoa(code)
}

// LanguageCode is the sender's implementation language (LanguageCode.java).
// JSON headers carry its name, binary headers its number.
type LanguageCode uint8

// The languages Java knows, by their wire numbers.
const (
	LanguageJava LanguageCode = iota
	LanguageCPP
	LanguageDotNet
	LanguagePython
	LanguageDelphi
	LanguageErlang
	LanguageRuby
	LanguageOther
	LanguageHTTP
	LanguageGo
	LanguagePHP
	LanguageOMS
	LanguageRust
	LanguageNodeJS
)

var languageNames = [...]string{
	"JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY", "OTHER",
	"HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS",
}

// String returns the name Java uses on the wire, or the number for
// languages newer than this table.
func (l LanguageCode) String() string {
	if int(l) < len(languageNames) {
		return languageNames[l]
	}
	return strconv.Itoa(int(l))
}

// languageByName maps a JSON language name to its code. Unknown names become
// LanguageOther: the field is informational and not worth failing a frame for.
func languageByName(name string) LanguageCode {
	for i, n := range languageNames {
		if n == name {
			return LanguageCode(i)
		}
	}
	return LanguageOther
}

// languageByNumber does the same for peers that send the ordinal.
func languageByNumber(n int64) LanguageCode {
	if n < 0 || n > 255 {
		return LanguageOther
	}
	return LanguageCode(n)
}
