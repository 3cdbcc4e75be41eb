// Package promsink is the one place namecast's metrics become Prometheus
// series. Every part of namecast (and memberlist) emits through
// hashicorp/go-metrics with dotted keys such as gossip.ops.applied; Sink
// receives them and Name turns each key into a conventional Prometheus
// name, so a counter a door adds tomorrow comes out right without anyone
// remembering the rules:
//
//  1. The key's parts are joined with "_", camelCase parts split
//     (memberlist's probeNode is probe_node) and anything but letters,
//     digits and "_" replaced; the service prefix "namecast" leads.
//  2. Units are in the name, in base units: a part ending in _ms becomes
//     _seconds (and its values are divided by 1000); a summary (a timer,
//     go-metrics' MeasureSince, which reports milliseconds) gets _seconds
//     unless the units table says it is something else (bytes, a count);
//     the units table names the bytes of memberlist's traffic counters.
//  3. A counter ends in _total.
//  4. Its HELP is the text in help.go for that name; a name not there yet
//     gets one built from the key's words ("namecast gossip ops applied"),
//     never the bare name. New series should add a line to help.go.
//
// A Sink is also a prometheus.Collector: register it, with Go's runtime
// and process collectors and BuildInfo, in the registry /metrics serves.
// Series never expire: a counter that vanished and came back would look
// like a reset.
//
// Sink is safe for concurrent use; each emission takes one mutex and one
// map lookup.
package promsink
