// Package zookeeper_test holds the ZooKeeper interop tests: go-zookeeper,
// Apache Curator 5.4 (Java) and kazoo (Python) against namecast agents and,
// for reference, against a real ZooKeeper 3.8 started by the test.
//
// It is its own module so the third-party clients stay out of namecast's
// go.mod. The tests need host packages (zookeeper, openjdk-17-jdk-headless,
// libcurator-*-java, python3-kazoo on Debian); they skip with the reason
// when one is missing, and fail instead when NAMECAST_INTEROP=require (CI).
//
// Each test starts its own servers (a ZooKeeper, agents) on free ports, so
// they run in parallel (t.Parallel): most of their time is spent waiting,
// on a JVM's start or a session's timeout, not computing.
package zookeeper_test
