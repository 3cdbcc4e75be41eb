package zookeeper

// OriginOwner is the ephemeralOwner this door shows for a record an agent
// holds without a ZooKeeper session (registered over HTTP): stable for the
// agent's name, alike on every agent. The agent writes it into the znode
// records it registers over HTTP (application instances).
func OriginOwner(origin string) int64 { return originOwner(origin) }
