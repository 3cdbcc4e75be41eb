// Package redis is the Redis door: the agent's registry served in RESP2,
// laid out as Dubbo's RedisRegistry lays it out, so a Dubbo application
// configured with redis://127.0.0.1:6379 registers and subscribes
// through its local agent (docs/protocols/redis.md; the client side
// follows RedisRegistry of apache/dubbo 2.7 and
// apache/dubbo-spi-extensions' dubbo-registry-redis for Dubbo 3).
//
// The algorithm:
//
//  1. The keyspace is the agent's table (keys.go): the hash
//     /dubbo/{interface}/{category} holds one field per Dubbo URL record
//     of that interface and category, from any door and any agent. Its
//     value is the URL's expiry in epoch ms: the one its client wrote,
//     for a field this door holds, else now + Expiry.
//  2. HSET of a URL holds it (holds.go): one lease per field, its
//     deadline the expiry written, saved before the reply; the record is
//     then applied through the host. A renewal (HSET of a field held)
//     moves the lease's deadline. HSET counts the fields that were not in
//     the hash, exactly as Redis counts, since Dubbo publishes "register"
//     on a renewal only when the count is 1. dynamic=false URLs are rules.
//  3. HDEL and DEL let go of what this door holds. A field whose expiry
//     passes unrenewed is withdrawn by the door's sweep: Dubbo leaves that
//     to an admin process, which most deployments never run.
//  4. Every change of the table that no client of this door made is
//     published to this agent's subscribers (feed.go) as Dubbo would
//     publish it: "register" or "unregister" on the key's channel. A
//     client's own write is published by the client (Dubbo always follows
//     a write with PUBLISH); the door mutes the keys it is changing for a
//     client so that subscribers do not hear it twice.
//  5. PUBLISH, SUBSCRIBE and PSUBSCRIBE are a Redis server's, local to the
//     agent (pubsub.go).
//
// Replies are redis-server 7.0's, byte for byte (diff_test.go compares
// them), except where docs/protocols/redis.md says otherwise: HELLO is
// refused as Redis 5 refuses it, so RESP3 clients fall back to RESP2;
// only Dubbo's layout is stored.
//
// Concurrency: each connection is served by its goroutine, which reads and
// answers commands in order, and a writer goroutine that writes its
// replies and the messages published to it from one bounded queue. Write
// commands hold the door's write lock while they change leases and the
// table, then wait for the lease write outside it, so concurrent writers
// share one fsync. Every input is bounded (resp.Limits, Config).
package redis
