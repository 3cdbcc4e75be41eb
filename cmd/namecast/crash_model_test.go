package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// The crash test's model of what was acknowledged. Every key is written
// by one writer, through its home agent's doors only, one operation at a
// time, so what the agents owe for it is that writer's history: the
// state its last definite answer left, or, after operations whose answer
// never came (a kill -9 in flight, a timeout), any of the states those
// operations would have made. Only the writer touches a key while writers
// run, only the checker while they are stopped: no locks.

// kstate is what a key holds: absent, or present with a value (URL and
// rule keys have none; KV values and znode data are the writer's).
type kstate struct {
	present bool
	val     string
}

func (s kstate) String() string {
	if !s.present {
		return "absent"
	}
	if s.val == "" {
		return "present"
	}
	return "present=" + s.val
}

// presentUnread is a znode seen there (NODEEXISTS) without its data.
var presentUnread = kstate{present: true, val: "(unread)"}

// Key kinds, by door and by the data dir file that keeps them.
const (
	kindURL    = "url"    // HTTP registration, no TTL: a lease (leases.*)
	kindBroker = "broker" // RocketMQ broker registration: a lease
	kindRule   = "rule"   // HTTP dynamic=false URL: a rule (rules.*)
	kindKV     = "kv"     // RocketMQ KV config: a rule
	kindEph    = "eph"    // ZooKeeper ephemeral znode: its session's lease
	kindZnode  = "znode"  // ZooKeeper persistent znode under /dubbo/config: a rule
)

var crashKinds = []string{kindURL, kindBroker, kindRule, kindKV, kindEph, kindZnode}

// leaseKind: the key is held by a lease of its home agent, kept in
// leases.json and leases.log; otherwise it is a cluster rule, kept in
// rules.json and rules.log by every agent.
func leaseKind(kind string) bool { return kind == kindURL || kind == kindBroker || kind == kindEph }

type ckey struct {
	kind, name string
	home       int
	// allowed: every state the key may be in now; one after a definite
	// answer.
	allowed []kstate
	// history of this key's operations since the last check, for the
	// report when it goes wrong.
	history []string
	// since: the key's state at the last check, then every state an
	// operation since acknowledged or may have made, in order; revert:
	// the tail of it the key may be back at after its home lost the last
	// entries of its lease log (lostEntries). Both under judgeMu: the
	// fault reads them while the writers run.
	since, revert []kstate
}

// judgeMu guards every key's since and revert.
var judgeMu sync.Mutex

func (k *ckey) String() string { return fmt.Sprintf("%s %s (home n%d)", k.kind, k.name, k.home) }

func (k *ckey) path() string {
	if k.kind == kindEph {
		return "/services/crash/" + k.name
	}
	return "/dubbo/config/crash/" + k.name
}

// believed: the one state the key is in, or ok false when unsure.
func (k *ckey) believed() (kstate, bool) {
	if len(k.allowed) == 1 {
		return k.allowed[0], true
	}
	return kstate{}, false
}

func (k *ckey) note(format string, args ...any) {
	if len(k.history) > 40 {
		k.history = k.history[len(k.history)-20:]
	}
	k.history = append(k.history, fmt.Sprintf(format, args...))
}

// acked: the door said the operation was done. What the key's home
// restores after a later loss of log entries can no longer undo it.
func (k *ckey) acked(s kstate) {
	k.allowed = []kstate{s}
	judgeMu.Lock()
	k.since, k.revert = append(k.since, s), nil
	judgeMu.Unlock()
}

// inFlight: the operation's answer never came; it may or may not have
// happened.
func (k *ckey) inFlight(s kstate) {
	if !slices.Contains(k.allowed, s) {
		k.allowed = append(k.allowed, s)
	}
	judgeMu.Lock()
	k.since = append(k.since, s)
	judgeMu.Unlock()
}

// lostEntries: the key's home was killed and lost the last entries of its
// lease log; the cluster (a peer) saw the key in state seen. A change no
// peer heard of before the kill may be lost with them, so the restarted
// agent may serve any state since the one the cluster saw; one before it
// would be the cluster's withdrawal or overwrite undone. seen not among
// them (the peer had already dropped the dead agent's records): any state
// since the last check.
func (k *ckey) lostEntries(seen kstate) {
	judgeMu.Lock()
	defer judgeMu.Unlock()
	from := 0
	for i, s := range k.since {
		if s == seen || (seen == presentUnread && s.present) {
			from = i
		}
	}
	k.revert = slices.Clone(k.since[from:])
}

// checked: every agent serves state got, the key's start for what follows.
func (k *ckey) checked(got kstate) {
	k.allowed, k.history = []kstate{got}, nil
	judgeMu.Lock()
	k.since, k.revert = []kstate{got}, nil
	judgeMu.Unlock()
}

// reverted says whether got is a state lostEntries allows.
func (k *ckey) reverted(got kstate) bool {
	judgeMu.Lock()
	defer judgeMu.Unlock()
	return slices.Contains(k.revert, got) || (got == presentUnread && slices.ContainsFunc(k.revert, func(s kstate) bool { return s.present }))
}

// verdict classifies what a reader saw against what is owed.
type verdict int

const (
	vOK          verdict = iota
	vLost                // an acknowledged write is missing
	vResurrected         // an acknowledged delete is undone, or an overwritten value is back
)

// judge says whether got is allowed; mayLose lets absence pass (the damage
// done to the key's home data dir may have destroyed it).
func (k *ckey) judge(got kstate, mayLose bool) verdict {
	switch {
	case slices.Contains(k.allowed, got):
		return vOK
	case got == presentUnread && slices.ContainsFunc(k.allowed, func(s kstate) bool { return s.present }):
		return vOK
	case !got.present && mayLose:
		return vOK
	case k.reverted(got):
		return vOK
	case !got.present:
		return vLost
	default:
		// an acknowledged delete undone, or an overwritten value back
		return vResurrected
	}
}

func (k *ckey) allowedString() string {
	var s []string
	for _, a := range k.allowed {
		s = append(s, a.String())
	}
	return strings.Join(s, " or ")
}
