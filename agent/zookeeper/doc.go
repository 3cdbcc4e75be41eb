// Package zookeeper serves the ZooKeeper client protocol on top of a
// namecast agent, so unmodified Dubbo applications (Java on Curator,
// dubbo-go, anything on go-zookeeper or kazoo) configured with
// zookeeper://127.0.0.1:2181 register, subscribe and are notified through
// their local agent, with no ZooKeeper ensemble anywhere. The wire codec is
// package zkwire; the protocol facts it relies on are in
// docs/protocols/zookeeper-wire.md, which "spec §N" in comments cites.
//
// # One registry
//
// The znode tree is a view of the agent's route table, not a second store:
//
//   - A Dubbo URL leaf, /dubbo/{URL.encode(interface)}/{category}/{URL.encode(url)},
//     is the URL record routes.URLKey(interface, category, url): a provider
//     registered over ZooKeeper is listed by GET /v1/services and the Go
//     client, and one registered over HTTP is a child znode here. The
//     record is keyed by the canonical URL (parameters sorted) and keeps
//     what the client wrote: the name as spelled (listed by getChildren on
//     every agent), the data and the owning session (routes.URL's Path,
//     Data, Owner). Any spelling of the same URL reaches the one node, so
//     a create under a second spelling answers NODEEXISTS; setData on it
//     is refused (Dubbo never sends one; the record keeps no version).
//   - Every other path is a routes.Znode record carrying data, version,
//     ctime, mtime and the ephemeral owner. Dubbo 3's application-level
//     znodes among them (/services/{app}/{id}, /dubbo/mapping/{interface})
//     are also read by the table's application views (routes/apps.go,
//     GET /v1/apps); an instance registered over HTTP is such a record,
//     held by its agent under a TTL, whose owner is routes.OriginOwner(agent).
//   - Two agents may both accept a create of one ephemeral path, when each
//     has not yet seen the other's (no consensus refuses the second). Each
//     record carries the table's Lamport stamp (routes.Table.Stamp), and
//     every agent shows the same one (pick): a rule first, then the later
//     stamp, then the higher owner session id, then the agent name; never
//     a wall clock, never "this agent's own". Where the shown node changes
//     owner or name, watchers see what a ZooKeeper client sees when a node
//     is deleted and another session creates it: NodeDeleted, NodeCreated,
//     the parent's NodeChildrenChanged. The losing session is expired as
//     soon as the winner's record reaches its agent (conflicts.go), unless
//     the path is a Dubbo URL leaf (both registered the same URL); until
//     then its record stays, hidden where the winner's is known.
//   - Ephemeral znodes are this agent's records: withdrawn everywhere when
//     their session ends or the agent dies or leaves. Persistent (and
//     container) znodes, including dynamic=false URLs, config-center,
//     metadata and mapping nodes, are cluster rules: they outlive their
//     writer and, with --data-dir, every restart.
//   - A path with descendants exists implicitly (empty data, version 0),
//     so trees stay valid whatever order gossip delivers records in.
//   - /dubbo/mapping/{interface} is merged as a set: each agent writes its
//     own part, readers see the sorted union of the comma-separated names
//     and the highest version, so concurrent first exports on different
//     agents never lose an application name.
//   - /, /zookeeper, /zookeeper/quota and /zookeeper/config exist as on a
//     standalone server, with an empty (not null) data buffer and, for
//     /zookeeper/config, aversion -1: they cannot be deleted,
//     /zookeeper/config is read-only (NOAUTH, as its ACL is there), and
//     the others take data and children like any node.
//   - Container nodes are reaped once empty (containers.go): at the second
//     check (ContainerCheck, 5 s) that finds one empty after it had a
//     child.
//
// The server keeps a tree mirroring the table. The table's OnChange hook
// marks changed keys; local writes refresh their path before replying and a
// goroutine refreshes paths changed by gossip, each path once however many
// records changed. Each refresh assigns zxids from a local clock
// (max(zxid+1, unix µs)) and fires watches in the same critical section,
// so a notification is always queued before any reply that shows its
// change.
//
// # Sessions
//
// Sessions live on one agent. closeSession withdraws its ephemeral znodes
// at once. A connection that closes without closeSession (the process on
// this host died) keeps its session for min(negotiated timeout, grace),
// default 5 s, during which the client may re-attach with its id and
// password; then its znodes go. A silent connection expires after its
// timeout. Timeouts are clamped to [4 s, 40 s] as ZooKeeper's defaults do.
// With a data dir, a session that owns ephemeral znodes survives an agent
// restart (leases.go, package lease): its lease keeps its id, password,
// timeout and znodes, with the deadline at which it would expire if its
// client never came back (a timeout after it was last heard, the grace
// once its connection closed). The restarted agent republishes the znodes
// before serving and resumes the session detached; the client re-attaching
// with its id and password keeps both, otherwise it expires when the time
// its lease had left has passed, counted from when the door takes
// handshakes (after the agent's first sync: a session does not expire
// while its client's handshake is held back). Every change of a session's
// ephemeral znodes (create, setData, delete, a delete through another
// agent) writes its lease before the change is applied, and is answered
// once the write is on disk: the door waits with its locks let go, so
// writers at once share one fsync (package lease, group commit).
// closeSession and expiry write the lease's removal before withdrawing,
// so a restart never resurrects the znodes. A change that cannot be
// written (a full disk) answers SYSTEMERROR
// (docs/protocols/zookeeper-wire.md §1.6) and changes nothing: not the
// tree, the watches, the gossip or the session; a multi of deletes is all
// or nothing: every operation is checked before any is applied, its
// sessions' leases are one write, and when its rule delete is refused
// after them they are written back (if even that fails, the lease log
// takes nothing more until a snapshot of what is held is written, and
// the door logs it at ERROR). A closeSession that cannot be written is not acknowledged
// either: SYSTEMERROR, and the session lives on with its connection. An
// expiry has nobody to answer and withdraws at once; a removal the disk
// refuses is saved once it takes writes (until then a restart restores
// the session until its deadline, as after a crash). The saved deadline
// may lag by the agent's lease slack (5 s) after a crash; SIGTERM saves
// it exactly.
// A new connection is not answered until the agent has synced with its
// cluster (bounded), so check=true consumers do not start on an empty view.
//
// A delete of an ephemeral znode is seen here at once. It reaches other
// agents at once too, unless its session connected or re-attached within
// RecreateWindow (10 s): curator-x-discovery and dubbo-go delete and
// re-create their nodes right after every reconnect, so such a delete is
// held (DeleteHold, 500 ms) and a re-create of the same path within the
// hold cancels it, and other agents never see a gap. A deliberate
// unregister, long after the connection began, is not held.
//
// # Watches
//
// One-shot data, exist and child watches, setWatches/setWatches2 with
// catch-up events on re-attach, persistent and persistent-recursive
// addWatch; all fire once per change, with state SyncConnected, for local
// changes and for changes arriving by gossip alike.
//
// # Limits and bad input
//
// More than MaxClientConns connections from one client IP (60, ZooKeeper's
// maxClientCnxns) are closed before their handshake is read.
//
// Frames above 1 MiB (jute.maxbuffer) close the connection before anything
// is allocated for them; malformed records answer MARSHALLINGERROR, unknown
// opcodes UNIMPLEMENTED, and the connection carries on. Paths are checked
// in ZooKeeper's order: a write of an invalid path answers BADARGUMENTS,
// or NONODE where ZooKeeper looks its parent up first (create "/a//b");
// a read of one answers NONODE. Four-letter words: ruok, srvr, stat,
// mntr, conf, cons, envi and wchs are answered; the other words ZooKeeper
// knows answer "<word> is not executed because it is not in the
// whitelist.", as ZooKeeper does for words not enabled. Sessions (MaxSessions) and armed watches (MaxWatches) per
// agent are bounded: past them a connection is refused, or the watching
// request answers SYSTEMERROR, with a log line naming the limit. A client
// that pipelines faster than it reads stops being read once 4 MiB of
// replies wait (backpressure); one that lets 16 MiB of notifications pile
// up is disconnected. Metrics: namecast_zookeeper_sessions, _connections,
// _watches, _znodes, _requests{op,err}, _latency_ms{op}, _notifications,
// _refused{what} (refusals.go) and _conflicts_lost{op} (conflicts.go).
// ExpireSession and DropConnections act on live sessions for operators
// and tests.
//
// # What it cannot promise (deviations from ZooKeeper)
//
//   - No global order: CAS (setData/delete with a version) is checked
//     against this agent's view; two agents can both accept one, and the
//     last writer wins (mappings merge instead). The session whose
//     versioned setData or ephemeral create lost such a race is expired
//     once the winner's record reaches its agent, and its writes answer
//     SESSIONEXPIRED from then on (conflicts.go); before, both act on
//     their answer (docs/protocols/zookeeper-wire.md §7.7).
//   - Sessions do not move between agents: another agent answers a known
//     session id with "expired", and clients re-register. They survive a
//     restart of their own agent only with a data dir.
//   - A crashed client's znodes go after the grace, not the session timeout.
//   - Sequential creates, multi holding anything but deletes and checks,
//     TTL nodes, reconfig, SASL, ACL reads and writes answer
//     UNIMPLEMENTED; ACLs and auth are accepted, not enforced. A
//     session's refusals are paced (RefusalPace, refusals.go), the first
//     of each kind logged at WARN and all counted
//     (namecast_zookeeper_refused_total{what}), so a recipe that retries at once
//     does not spin.
//   - Recipes across agents (docs/protocols/zookeeper-wire.md §7.8):
//     watches and caches (Curator's CuratorCache, NodeCache,
//     PathChildrenCache, TreeCache; kazoo's DataWatch, ChildrenWatch;
//     curator-x-discovery) work on every agent. A single ephemeral node
//     as a lock or leader flag, and versioned writes (SharedCount,
//     DistributedAtomicLong, kazoo's Counter), are exact within one agent;
//     across agents a conflict expires the loser once it is seen, so for
//     the gossip delay a lock can have two holders and a counter hand out
//     a value twice. Recipes on sequential nodes (Curator's
//     InterProcessMutex, LeaderSelector, LeaderLatch, semaphores, queues;
//     kazoo's Lock, Election, Semaphore, Queue) fail loudly with
//     UNIMPLEMENTED.
//   - sync answers at once: it is not a barrier across agents, a read
//     after it sees this agent's view. A multi of
//     deletes and checks (zkCli's deleteall sends its deletes so) is all
//     or nothing against this agent's view (ops_multi.go).
//   - cversion is a hash of the child names (equal views, equal numbers),
//     and zxids are per agent.
//   - Deleting another agent's ephemeral node (Dubbo's fault-tolerant
//     create deletes and re-creates on NODEEXISTS; an operator's recursive
//     delete) succeeds as in ZooKeeper, but reaches the cluster through
//     the owning agent (commands.go): this agent shows it gone at once,
//     other agents once the owner has withdrawn it. setData on another
//     agent's ephemeral node, and delete of a URL another agent registered
//     over HTTP (no session holds it), answer BADARGUMENTS with a log
//     line naming the agent. An operator's recursive delete works the same
//     way, whether it sends plain deletes (kazoo's delete(recursive=True),
//     Curator's deletingChildrenIfNeeded) or a multi (zkCli's deleteall).
//   - Unknown opcodes answer UNIMPLEMENTED and keep the connection open.
package zookeeper
