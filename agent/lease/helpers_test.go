package lease

// HeldByOtherDoor reports whether a lease of a door other than door covers
// key: another holder (an HTTP registration, a ZooKeeper session, a
// RocketMQ connection) still holds the record, so door letting go of it
// must not withdraw it. Leases are kept in memory with or without a data
// dir, so this holds without one too. It looks the key up in the index of
// what each lease names (index.go), not through every lease.
func (ls *Store) HeldByOtherDoor(key, door string) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	other := false
	ls.eachHolderLocked(key, func(k string) { other = other || ls.m[k].Door != door })
	return other
}
