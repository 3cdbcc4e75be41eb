package routes

// Drop floors. The gossip layer applies an origin's ops only while the
// origin is a live member, but its check and the apply are two steps, and
// the member can be declared dead (its records dropped) in between: the
// late apply would then re-create records nobody will ever remove. So the
// table remembers, per dropped origin, the highest incarnation that died,
// and refuses under its own lock every op and snapshot of an incarnation
// at or below it. The drop and the refusal are then atomic: whatever the
// interleaving, no record of a dead incarnation survives its drop.
//
// A floor is lowered again only by Admit, when the gossip layer sees the
// member alive (a restart, or a refuted death of the same incarnation).

// DropOrigin forgets every record of origin (its agent died or left) and
// refuses its incarnations up to inc, or up to the one held if higher,
// until Admit. Dropping the local origin or the rules is refused: they
// live as long as we do. It reports whether records were held.
func (t *Table) DropOrigin(origin string, inc uint64) bool {
	if origin == t.local || origin == RulesOrigin || origin == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st, ok := t.origins[origin]
	if ok {
		inc = max(inc, st.inc)
	}
	t.floors[origin] = max(t.floors[origin], inc)
	if !ok {
		return false
	}
	t.dropLocked(origin, st)
	t.keepGone(origin, st)
	return true
}

// Admit records that origin is a live member at incarnation inc (0:
// unknown): ops of inc and later are taken again, and what the table holds
// of an older incarnation is retired (retire.go), since the member
// restarted: its old records are superseded, each as the new incarnation
// republishes or settles its key. It reports whether old records were
// retired.
func (t *Table) Admit(origin string, inc uint64) bool {
	if origin == t.local || origin == RulesOrigin || origin == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if inc == 0 {
		delete(t.floors, origin)
	} else {
		t.floors[origin] = inc - 1
	}
	st, ok := t.origins[origin]
	if !ok || st.inc >= inc {
		return false
	}
	had := st.live.len() > 0 || len(st.retired) > 0
	t.retire(origin, st, inc)
	return had
}

// Forget clears origin's floor: the gossip layer no longer remembers the
// member, so nothing of it can be in flight any more.
func (t *Table) Forget(origin string) {
	t.mu.Lock()
	delete(t.floors, origin)
	delete(t.gone, origin)
	t.mu.Unlock()
}

func (t *Table) dropLocked(origin string, st *originState) {
	for k, e := range st.live.all() {
		t.views.unlink(e)
		t.changed(k)
	}
	had := st.live.len() > 0 || len(st.retired) > 0
	for k := range st.retired {
		t.unretire(st, k)
	}
	delete(t.origins, origin)
	if had {
		t.watch.bump()
	}
}
