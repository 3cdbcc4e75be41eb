package routes

// kinds counts the record's set fields: a valid record has exactly one.
func (r Record) kinds() int {
	n := 0
	for _, set := range []bool{r.Broker != nil, r.Queue != nil, r.URL != nil, r.KV != nil, r.Znode != nil, r.Mapping != nil} {
		if set {
			n++
		}
	}
	return n
}

// keyIs is r.Key() == key without building the key: every op merged from
// a peer is checked against its record, and building the key was two of
// the four allocations per record of a joiner's sync (valid built it too).
// Queue records, nearly all of a table, are compared in place.
func (r Record) keyIs(key string) bool {
	if q := r.Queue; q != nil && r.kinds() == 1 {
		return hasQueueKey(key, q.BrokerName, q.Topic)
	}
	return key != "" && r.Key() == key
}
