// Package dubbo owns namecast's model of an Apache Dubbo registry URL: how a
// URL is parsed, what its canonical (identity) string is, and which
// registered URLs a subscription receives.
//
// A Dubbo registration is a URL such as
//
//	dubbo://10.0.0.5:20880/com.foo.BarService?interface=com.foo.BarService&version=1.0.0
//
// and the registry keys everything on it: register and unregister match on
// the full URL, and URLs that differ only in parameters coexist. This package
// makes that rule concrete: two URLs are the same registration exactly when
// their String forms are equal. String is Dubbo's toFullString (parameters in
// sorted key order, values as given), so the canonical form is also what Java
// and Go Dubbo clients print and parse.
//
// Invariants:
//   - A URL is immutable. Copies share storage safely and a URL may be used
//     from any number of goroutines without locking.
//   - For every u returned by Parse, Parse(u.String()) succeeds and returns a
//     URL with the same String (checked by FuzzParse).
//   - Parse never allocates more than a small multiple of MaxLength, so it is
//     safe on bytes straight from the network (multicast datagrams, HTTP
//     bodies, ZooKeeper-style encoded paths).
//
// Matching follows Dubbo's UrlUtils.isMatch (interface, category, enabled,
// group, version, classifier); see Match for the rules and where namecast
// reads Dubbo's intent rather than its substring-based implementation.
//
// Dubbo's registry contract as this package follows it is written in
// docs/protocols/dubbo-registry.md; "spec §N" in comments cites it.
package dubbo
