package zkwire

// Opcodes (ZooDefs.OpCode).
const (
	OpNotification    int32 = 0
	OpCreate          int32 = 1
	OpDelete          int32 = 2
	OpExists          int32 = 3
	OpGetData         int32 = 4
	OpSetData         int32 = 5
	OpGetACL          int32 = 6
	OpSetACL          int32 = 7
	OpGetChildren     int32 = 8
	OpSync            int32 = 9
	OpPing            int32 = 11
	OpGetChildren2    int32 = 12
	OpCheck           int32 = 13
	OpMulti           int32 = 14
	OpCreate2         int32 = 15
	OpReconfig        int32 = 16
	OpCheckWatches    int32 = 17
	OpRemoveWatches   int32 = 18
	OpCreateContainer int32 = 19
	OpCreateTTL       int32 = 21
	OpMultiRead       int32 = 22
	OpAuth            int32 = 100
	OpSetWatches      int32 = 101
	OpSASL            int32 = 102
	OpSetWatches2     int32 = 105
	OpAddWatch        int32 = 106
	OpCloseSession    int32 = -11
)

// Special xids.
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
	XidAuth         int32 = -4
)

// Error codes (KeeperException.Code) the door sends.
const (
	ErrOK                      int32 = 0
	ErrSystem                  int32 = -1
	ErrRuntimeInconsistency    int32 = -2
	ErrMarshalling             int32 = -5
	ErrUnimplemented           int32 = -6
	ErrBadArguments            int32 = -8
	ErrNoNode                  int32 = -101
	ErrBadVersion              int32 = -103
	ErrNoAuth                  int32 = -102
	ErrNoChildrenForEphemerals int32 = -108
	ErrNodeExists              int32 = -110
	ErrNotEmpty                int32 = -111
	ErrSessionExpired          int32 = -112
	ErrInvalidACL              int32 = -114
	ErrNoWatcher               int32 = -121
	ErrQuotaExceeded           int32 = -125
)

// Watcher event types and the one state the server sends.
const (
	EventNodeCreated         int32 = 1
	EventNodeDeleted         int32 = 2
	EventNodeDataChanged     int32 = 3
	EventNodeChildrenChanged int32 = 4
	StateSyncConnected       int32 = 3
)

// Create flags (CreateMode).
const (
	FlagPersistent           int32 = 0
	FlagEphemeral            int32 = 1
	FlagPersistentSequential int32 = 2
	FlagEphemeralSequential  int32 = 3
	FlagContainer            int32 = 4
	FlagPersistentTTL        int32 = 5
	FlagPersistentSeqTTL     int32 = 6
)

// addWatch modes and checkWatches/removeWatches types.
const (
	AddWatchPersistent          int32 = 0
	AddWatchPersistentRecursive int32 = 1

	WatcherChildren            int32 = 1
	WatcherData                int32 = 2
	WatcherAny                 int32 = 3
	WatcherPersistent          int32 = 4
	WatcherPersistentRecursive int32 = 5
)

var opNames = map[int32]string{
	OpCreate: "create", OpDelete: "delete", OpExists: "exists", OpGetData: "getData", OpSetData: "setData",
	OpGetACL: "getACL", OpSetACL: "setACL", OpGetChildren: "getChildren", OpSync: "sync", OpPing: "ping",
	OpGetChildren2: "getChildren2", OpCheck: "check", OpMulti: "multi", OpCreate2: "create2",
	OpReconfig: "reconfig", OpCheckWatches: "checkWatches", OpRemoveWatches: "removeWatches",
	OpCreateContainer: "createContainer", OpCreateTTL: "createTTL", OpMultiRead: "multiRead",
	OpAuth: "auth", OpSetWatches: "setWatches", OpSASL: "sasl", OpSetWatches2: "setWatches2",
	OpAddWatch: "addWatch", OpCloseSession: "closeSession",
}

// OpName names an opcode for logs and metrics; unknown ones are "other".
func OpName(op int32) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return "other"
}

var errNames = map[int32]string{
	ErrOK: "ok", ErrSystem: "systemerror", ErrRuntimeInconsistency: "runtimeinconsistency", ErrMarshalling: "marshallingerror", ErrUnimplemented: "unimplemented",
	ErrBadArguments: "badarguments", ErrNoNode: "nonode", ErrBadVersion: "badversion", ErrNoAuth: "noauth",
	ErrNoChildrenForEphemerals: "nochildrenforephemerals", ErrNodeExists: "nodeexists", ErrNotEmpty: "notempty",
	ErrSessionExpired: "sessionexpired", ErrInvalidACL: "invalidacl", ErrNoWatcher: "nowatcher",
	ErrQuotaExceeded: "quotaexceeded",
}

// ErrName names an error code for logs and metrics.
func ErrName(code int32) string {
	if n, ok := errNames[code]; ok {
		return n
	}
	return "other"
}
