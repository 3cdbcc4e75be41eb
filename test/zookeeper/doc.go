// Package zookeeper holds no code: it is the home of the ZooKeeper door's
// tests with real clients, in a module of its own so their dependencies stay
// out of namecast's go.mod. The cluster_*_test.go files (this package) drive
// go-zookeeper v1.0.4 against in-process agent clusters (agent/agenttest):
// every supported operation and error, watches fired by changes made through
// another agent, session expiry, re-attach within the grace, setWatches after
// a reconnect. The interop tests (package zookeeper_test, see doc_test.go)
// compare with a real ZooKeeper and run Curator and kazoo. "Spec §N" in
// comments cites docs/protocols/zookeeper-wire.md.
package zookeeper
