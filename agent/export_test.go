package agent

// TTLCount is the number of registrations with a pending TTL deadline, for
// tests outside the package that check it stays bounded.
func TTLCount(a *Agent) int {
	a.ttl.mu.Lock()
	defer a.ttl.mu.Unlock()
	return len(a.ttl.deadlines)
}
