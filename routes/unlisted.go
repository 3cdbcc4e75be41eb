package routes

import "slices"

// mergeSortedScan lets unlisted use the ordered key index; tests turn it
// off to compare with the scan of every live key.
var mergeSortedScan = true

// unlisted is the live keys of s's range that s does not list, at or
// below its seq: those an authoritative snapshot removes, in key order.
// The order matters past maxTombstones, where which deletes are
// remembered depends on the order they came in: in key order every
// replica keeps the same ones, where the live set's hash order (a seed
// per process) made each keep its own. The table's mu must be held for
// writing.
func (st *originState) unlisted(s Snapshot, listed map[string]bool) []string {
	var gone []string
	check := func(k string) {
		if e, ok := st.live.get(k); ok && e.seq <= s.Seq && !listed[k] {
			gone = append(gone, k)
		}
	}
	if !mergeSortedScan {
		for k, e := range st.live.all() {
			if e.seq <= s.Seq && s.Covers(k) && !listed[k] {
				gone = append(gone, k)
			}
		}
		slices.Sort(gone)
		return gone
	}
	if st.keys == nil {
		st.keys = make([]string, 0, st.live.len())
		for k := range st.live.all() {
			st.keys = append(st.keys, k)
		}
		slices.Sort(st.keys)
		st.added = nil
	}
	i, _ := slices.BinarySearch(st.keys, s.Lo)
	for ; i < len(st.keys) && (s.Hi == "" || st.keys[i] < s.Hi); i++ {
		check(st.keys[i])
	}
	var seen map[string]bool // a key deleted and put again is added twice
	for _, k := range st.added {
		if !s.Covers(k) || seen[k] {
			continue
		}
		if _, indexed := slices.BinarySearch(st.keys, k); indexed {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[k] = true
		check(k)
	}
	slices.Sort(gone) // the added keys come after the index's
	return gone
}

// noteAdded keeps the key index current for a key just put: past half
// the index's size in additions it is cheaper to build it again.
func (st *originState) noteAdded(k string) {
	if st.keys == nil {
		return
	}
	if len(st.added) > len(st.keys)/2+1024 {
		st.keys, st.added = nil, nil
		return
	}
	st.added = append(st.added, k)
}
