package lease

// HeldByOtherDoor reports whether a lease of a door other than door covers
// key: another holder (an HTTP registration, a ZooKeeper session, a
// RocketMQ connection) still holds the record, so door letting go of it
// must not withdraw it. Leases are kept in memory with or without a data
// dir, so this holds without one too.
func (ls *Store) HeldByOtherDoor(key, door string) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, l := range ls.m {
		if l.Door != door && l.Covers(key) {
			return true
		}
	}
	return false
}
