// Package netns builds throwaway multi-host networks for tests out of Linux
// network namespaces, so that behaviour which only shows across real hosts
// (mDNS discovery, a host dropping off the LAN, a SIGKILLed agent) can be
// exercised on one machine.
//
// A [Lab] is a private "switch" namespace holding a Linux bridge with
// multicast snooping off, plus one namespace per [Host] wired to it by a veth
// pair. Hosts get addresses from one /24 inside 198.18.0.0/15 (the range
// reserved for benchmarking, RFC 2544), a route for 224.0.0.0/4 so multicast
// works, and no default route: nothing a test sends can leave the lab. IPv6 is
// off unless [WithIPv6] is given, for the same reason.
//
// Keeping the bridge in its own namespace rather than the root one means the
// machine's firewall (br_netfilter passes bridged frames through iptables, and
// Docker sets FORWARD to DROP) never sees lab traffic, no interface names can
// collide with the host's or another lab's, and deleting the namespaces
// removes every link at once.
//
// Everything is torn down by t.Cleanup, also when the test fails or panics.
// A test binary killed outright (a -timeout) cannot clean up; its leftovers are
// recognised by the owner's pid in their names and swept by the next [New].
//
// New skips the test when it cannot work here: not Linux, not root, no ip(8)
// (Debian package iproute2), or `ip netns add` refused. Set NAMECAST_NETNS=require
// to turn those skips into failures, so CI cannot silently lose the tests.
//
// Commands run inside a host through `ip netns exec`; the test process itself
// can also reach into a host with [Host.DialContext], [Host.Listen] and
// [Host.HTTPClient], which is how a test talks to an agent's loopback-only
// HTTP API.
package netns
