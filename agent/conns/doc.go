// Package conns owns a door's accepted connections: from the moment a
// door's listener accepts one until the door has finished with it.
//
// A Set accepts on the listeners it is given, refuses a connection that
// would pass the door's bounds (open connections from one client IP, open
// connections in all), keeps every connection it let in until the door is
// done with it, and on Close closes the listeners and every connection and
// waits for the goroutines it started. The door keeps its protocol, and
// says in its own words why a connection was refused (Config.Refused).
//
// A door serves its connections in one of two ways:
//
//   - Serve: the set runs the door's serve function on a goroutine of its
//     own for each connection it lets in (the RocketMQ and ZooKeeper
//     doors). A connection is the set's until serve returns; serve ends it
//     (the set does not close it after, so a door can finish writing its
//     last replies).
//   - Listener: the set hands its connections to a server that runs its
//     own goroutines, net/http's (the Nacos door's gRPC port), through a
//     listener. A connection is the set's until that server closes it.
//
// Invariants: a connection is counted against the bounds from the moment
// it is let in until it is forgotten, so a refusal never counts one that
// has gone, and closing one makes room at once. Once Close has begun no
// connection is let in; every one let in before is closed by Close. All
// methods are safe for concurrent use.
package conns
