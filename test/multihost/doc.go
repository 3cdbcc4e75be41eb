// Package multihost proves, across real hosts, what namecast promises for a
// LAN (README, "Running namecast on every host"): agents started with only --discover find each other over
// mDNS and form one cluster; --cluster keeps clusters that see each other
// apart; --encrypt keeps out agents without the key and can be rotated while
// the cluster runs; a partition withdraws routes on both sides and heals by
// itself; a SIGKILLed agent's routes are withdrawn and, restarted with its
// data dir, it rejoins without being told where.
//
// Every test builds its own netns.Lab (one network namespace per host on a
// private bridge, addresses in 198.18.0.0/15, no route out) and runs the real
// namecast binary in each host with the default ports: gossip on
// 0.0.0.0:7946, the HTTP API on 127.0.0.1:7947, which the test reaches
// through netns.Host.HTTPClient. Nothing is shared between tests, so they
// run in parallel; the lab tears everything down when a test ends, passed or
// failed, and dumps the agents' logs on failure. Tests that wait out failure
// detection (key rotation, partitions, a SIGKILL) run the agents in profile
// fast; the others in lan, the default. Waits poll the agents' APIs with
// deadlines; the figures they log with "FIGURE" are measured the same way,
// to the ~100 ms the polls allow.
//
// The package has tests only. It needs root and ip(8); elsewhere it skips,
// unless NAMECAST_NETNS=require (as in CI) turns the skip into a failure.
package multihost
