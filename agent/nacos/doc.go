// Package nacos is the Nacos door: it serves Nacos 2.x clients
// (nacos-sdk-go v2, the Java client 2.x, so Dubbo's nacos:// registry and
// config centre and Spring Cloud Alibaba discovery) from the namecast
// agent beside them, unmodified, on the ports they assume: the HTTP port
// (8848) and gRPC on the HTTP port + 1000.
//
// # Protocol
//
// gRPC is served by net/http over cleartext HTTP/2 (grpc.go) and the wire
// by nacoswire, with no gRPC or protobuf library. A client opens one TCP
// connection, sends ServerCheckRequest on the unary Request service and
// gets a connection id, opens the BiRequestStream and sends
// ConnectionSetupRequest on it; from then on its unary requests are served
// and the door pushes NotifySubscriberRequest and ConfigChangeNotifyRequest
// on its stream. As in Nacos' server (core/.../remote/grpc/
// GrpcRequestAcceptor.java and GrpcBiStreamRequestAcceptor.java), requests
// are tied to the bi-stream by the connection they arrive on; a request on a
// connection that has not set up waits up to Config.SetupWait and is then
// refused with code 301 (UN_REGISTER), which makes the client reconnect.
// Any request the door cannot serve gets a Nacos ErrorResponse with
// Nacos' code (400 bad parameter, 302 no handler, 300 not ready), never a
// dropped call or a gRPC error.
//
// A 1.x client that lists a service with udpPort is pushed each change
// of it over UDP, acks and one resend included, as Nacos' UdpPushService
// does (udp.go); the push goes to the host the list request came from.
//
// # One registry
//
// Instances are URL records (instances.go), the records ZooKeeper and HTTP
// registrations make, so a Dubbo provider registered through Nacos under
// Dubbo's service name providers:{interface}:{version}:{group} (Dubbo's
// NacosRegistry and NacosNamingServiceUtils: the URL's parameters are the
// instance's metadata) is the same Dubbo URL every door shows, and a
// provider registered through any door is an instance to a Nacos
// subscriber. Dubbo 3's application-level discovery through Nacos (the
// application as a service, instances with dubbo.metadata.* metadata; the
// interface → application mapping and the applications' metadata as
// configs) is the same application instance, mapping and metadata records
// the ZooKeeper door and HTTP write (apps.go), so /v1/apps, the UI and a
// ZooKeeper consumer see an application registered through Nacos, and a
// Nacos consumer one registered through ZooKeeper. Other services are
// nacos://ip:port/{service} URLs under category "nacos". Namespace, group,
// cluster, weight and enabled are kept as nacos.* parameters. The name an
// instance is registered under decides where it is listed: a Dubbo
// service's URL takes its version, group and category from the name,
// whatever the metadata says. A disabled instance stays registered and is
// left out of every list, query, subscription and push, as Nacos does (a
// Dubbo one carries Dubbo's enabled=false too, so Dubbo consumers of every
// door leave it out); weight 0 is kept as 0. A service's instances are all
// ephemeral or all persistent: the other kind is refused with Nacos'
// error, checked and registered in one step on the agent (two agents
// registering the two kinds at the same moment both succeed, and the
// service lists both).
//
// Ephemeral instances (the default) are this agent's records, held by who
// registered them (holds.go): the gRPC connection, or for the 1.x HTTP
// API the instance's beats. Each holder is a lease of the agent's host
// (door "nacos"), so the holder-set rule holds across doors: a record is
// withdrawn from this agent when its last holder lets go, never earlier,
// and a URL registered over Nacos and over ZooKeeper or HTTP stays while
// either holds it. A connection whose stream ends (closed, or its process
// killed) keeps its instances for Config.Grace (--nacos-grace), then
// lets go of them; an HTTP instance lives Config.BeatTimeout (30 s,
// Nacos' ipDeleteTimeout) past its last beat.
//
// With the agent's data dir, a holder's lease is saved and fsynced before
// its registration or withdrawal is answered (an error, when it cannot
// be, changes nothing), and the door's Close withdraws nothing (the door
// contract). Restarted, the agent republishes the instances and the door
// takes its holders back: an HTTP instance is held by its beats again; a
// connection's holder waits the grace, from when the agent is ready, for
// its client to reconnect and redo its registrations (as Nacos clients
// do on reconnect), then lets go of what was not re-registered.
// Persistent instances and configs are cluster rules: they outlive
// connections and agents, and the later write by the rules' hybrid
// logical clock wins on every agent.
//
// # The HTTP APIs
//
// The HTTP port serves the 1.x open API (http.go; forms.go reads its
// parameters as Nacos' builders do) and the v2 open API (v2.go, the same
// operations in Nacos' Result shape): instances held by beats, 15 s to
// unhealthy and 30 s to withdrawn (beats.go), instance updates kept as
// cluster rules laid over the instance every agent lists (update.go),
// configs (httpconfig.go), config long polls woken by a change through
// any agent (listener.go), UDP push to 1.x subscribers (udp.go) and the
// server status SDKs ask for (operator.go).
//
// # What differs from Nacos (and what a user gets instead)
//
// docs/protocols/nacos-conformance.md lists every request type and
// endpoint against Nacos' behaviour; in short:
//
//   - Config CAS (ConfigPublishRequest.casMd5) is checked and applied in one
//     step on the agent that receives it, not linearizably across agents:
//     two CAS publishes through two agents at the same moment can both
//     succeed, and the later one (by the rules' clock) is the content
//     every agent converges on. Nacos' embedded store or its database
//     would refuse one of them.
//   - Persistent instances are not Raft-backed: a registration is a rule
//     gossiped to every agent and kept through restarts with --data-dir;
//     there is no health check of persistent instances (Nacos probes them
//     by TCP or HTTP), they are listed healthy until deregistered.
//   - A gRPC instance's health is its connection's liveness: it is listed
//     as registered (healthy=false kept) until withdrawn. A 1.x HTTP
//     instance is listed unhealthy 15 s after its last beat and withdrawn
//     at 30 s, as Nacos (beats.go), decided by the agent that holds it.
//   - Config content is bounded to MaxConfigContent (64 KiB; Nacos 10 MiB),
//     since every agent keeps every config; gray (beta, tag) configs,
//     history and the console are not served.
//   - A closed connection's instances stay for the grace (5 s by
//     default), where Nacos withdraws them at once: a client that
//     reconnects (or the agent restarting under it) shows its consumers
//     no gap.
//   - An application instance is Dubbo's application instance only in the
//     public namespace's DEFAULT_GROUP (Dubbo's default) and when
//     ephemeral: in another namespace or group, or persistent, it stays a
//     nacos:// instance, which the application views do not show.
//   - The mapping config is a set merged across agents, as the ZooKeeper
//     door's /dubbo/mapping: a publish that drops an application another
//     agent's part names leaves it in the union.
//   - A UDP push goes to the udpPort of the host the list request came
//     from, never to the clientIP the request names (Nacos pushes to
//     clientIP): anyone who can reach the HTTP port could otherwise aim
//     pushes at a third host. Every 1.x client binds its push socket to
//     every address, so it gets them. Any client naming udpPort is
//     pushed (Nacos pushes only to client versions it knows by their
//     User-Agent), within Config.MaxUDPSubscribers
//     (MaxUDPSubscribersPerHost from a remote host); past them the list is
//     answered and not pushed.
//   - An instance update (PUT or PATCH over HTTP) is seen through this
//     door only: a ZooKeeper or HTTP consumer of the same Dubbo URL is
//     not told the new weight or that it is disabled by an update. It
//     stays until the instance is deregistered over HTTP (Nacos forgets
//     it a minute after the instance goes).
//   - A 1.x long poll is answered when a listened config's content
//     differs from the MD5 its client holds, so a republish of the same
//     content ends none (Nacos answers every change event); a poll is
//     held at most 2 min.
//   - Authentication (accessToken, identity headers) is not checked: the
//     door, like the ZooKeeper and RocketMQ doors, is for the host it runs
//     on.
//
// # Concurrency
//
// writeMu serialises changes (a check and the change it guards are one
// step); mu guards connections, holders and subscriptions and is never
// held while writing to a client. The table's change hook only notes keys;
// the push loop recomputes subscriptions outside every lock and writes to
// each connection on its own goroutine, each write bounded by
// WriteTimeout. A holder's lease is written under writeMu (never under
// mu) and its fsync waited for after writeMu is let go, so Nacos writers
// at the same moment share one fsync (package lease, group commit).
// Close stops the listeners, ends every stream and waits for the door's
// goroutines; it withdraws nothing.
package nacos
