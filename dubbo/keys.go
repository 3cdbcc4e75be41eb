package dubbo

// Parameter keys the registry layer interprets (Dubbo CommonConstants and
// RegistryConstants).
const (
	KeyInterface  = "interface"
	KeyCategory   = "category"
	KeyGroup      = "group"
	KeyVersion    = "version"
	KeyClassifier = "classifier"
	KeyEnabled    = "enabled"
	KeyDynamic    = "dynamic"
	KeySide       = "side"
)

// Data categories (the category parameter). A URL without one is a provider.
const (
	CategoryProviders     = "providers"
	CategoryConsumers     = "consumers"
	CategoryRouters       = "routers"
	CategoryConfigurators = "configurators"
)

// Any is Dubbo's wildcard value: interface=*, group=*, version=*,
// classifier=*, category=* and enabled=* in a subscription.
const Any = "*"

// EmptyProtocol is the protocol of the single URL Dubbo pushes for a category
// that has no entries; see Empty.
const EmptyProtocol = "empty"

// defaultKeyPrefix marks keys that pre-2.7 Dubbo registered as
// "default.<key>"; Dubbo still reads them as <key> when <key> is absent.
const defaultKeyPrefix = "default."
