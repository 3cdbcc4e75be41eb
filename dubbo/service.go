package dubbo

import "strings"

// Interface is the service name: the interface parameter, else the path
// (Dubbo's getServiceInterface). "*" in a subscription means every service.
func (u URL) Interface() string { return u.Param(KeyInterface, u.path) }

// Category is the data category, "providers" when the URL names none. On a
// subscription it may be a comma list, "*" or carry "-x" exclusions; use
// Categories to read it as a list.
func (u URL) Category() string { return u.Param(KeyCategory, CategoryProviders) }

// Group is the group parameter, or "".
func (u URL) Group() string { return u.Param(KeyGroup, "") }

// Version is the version parameter, or "".
func (u URL) Version() string { return u.Param(KeyVersion, "") }

// ServiceKey is "[group/]interface[:version]", Dubbo's key for a service in
// its cache file and in notifications. It is "" when the URL names no
// interface.
func (u URL) ServiceKey() string {
	iface := u.Interface()
	if iface == "" {
		return ""
	}
	var b strings.Builder
	if g := u.Group(); g != "" {
		b.WriteString(g)
		b.WriteByte('/')
	}
	b.WriteString(iface)
	if v := u.Version(); v != "" {
		b.WriteByte(':')
		b.WriteString(v)
	}
	return b.String()
}

// Dynamic reports whether the entry must vanish when its registrant dies
// (dynamic=true, the default) rather than persist (dynamic=false).
func (u URL) Dynamic() bool { return u.boolParam(KeyDynamic, true) }

// Enabled reports whether a provider is enabled (default true). A disabled
// provider is hidden from subscribers unless they ask enabled=*.
func (u URL) Enabled() bool { return u.boolParam(KeyEnabled, true) }

// boolParam reads a flag as Java's Boolean.parseBoolean does: "true" in any
// case is true and every other non-empty value is false, so that namecast
// and Dubbo agree on odd values such as dynamic=yes.
func (u URL) boolParam(key string, def bool) bool {
	v := u.Param(key, "")
	if v == "" {
		return def
	}
	return strings.EqualFold(v, "true")
}
