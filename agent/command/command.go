// Package command carries a door's change to records another agent owns:
// only an origin changes its own records, so a door that must change
// another agent's (a RocketMQ admin write, a ZooKeeper delete of another
// agent's ephemeral node) leaves that agent a command. A command is a
// cluster-scoped KV rule in the door's reserved namespace:
//
//	key   {target agent}/{op}/{subject}
//	value {issued, unix ms} {parameter}
//
// Rules replicate to every agent; the target runs the command on its own
// records and deletes the rule. One key per (target, op, subject) means a
// later command replaces an earlier one not yet run.
//
// A command whose target is gone (no agent of that name holds records) is
// deleted by any agent that has seen it, unchanged, for the inbox's TTL on
// its own clock. The issued time is never compared with another host's
// clock: with skew that would delete a command its target was about to
// run, after the client was told it succeeded. While the target is alive
// nothing deletes its command but the target, once it has run it.
package command

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/namecast/namecast/routes"
)

// Command is one command read from the rules.
type Command struct {
	Target, Op, Subject, Param string
}

// Rule is the rule that leaves target the command op on subject with
// param, issued now, in namespace ns. op and subject must hold no '/'.
func Rule(ns, target, op, subject, param string, now time.Time) routes.Record {
	return routes.Record{KV: &routes.KV{Namespace: ns, Key: target + "/" + op + "/" + subject,
		Value: strconv.FormatInt(now.UnixMilli(), 10) + " " + param}}
}

// Inbox reads one door's commands: it runs those addressed to this agent
// and deletes what is done. Set the fields before the first Collect.
type Inbox struct {
	Namespace string
	TTL       time.Duration // how long a gone target's command is kept
	// Valid says whether a command is one the door can run; one that is
	// not, or whose key or value is not a command's, is deleted at once,
	// whoever it is addressed to. Nil: every well-formed command is.
	Valid func(Command) bool
	// Dropped, if set, is told of each command deleted for that (the
	// door says so in its log).
	Dropped func(key, value string)
	// Run runs a valid command addressed to this agent, and says whether
	// it is done; one that is not (its change could not be saved, say)
	// stays, and runs again at the next Collect.
	Run func(Command) (done bool)
	// Remove deletes the rules of these keys (routes.KVKey) once they are
	// done; a failure leaves them for the next Collect.
	Remove func(keys []string)

	mu   sync.Mutex // held throughout Collect: a command runs once
	seen map[string]seen
}

// seen is when this agent first saw a command (key and value), on its own
// clock.
type seen struct {
	value string
	since time.Time
}

// Collect runs the commands in table addressed to this agent, and deletes
// those done with the malformed ones and those of gone targets seen unchanged for
// TTL. now is this agent's clock.
func (in *Inbox) Collect(table *routes.Table, now time.Time) {
	in.mu.Lock()
	defer in.mu.Unlock()
	self := table.Local()
	present := map[string]bool{}
	for _, o := range table.Origins() {
		present[o] = true
	}
	seenNow := make(map[string]seen, len(in.seen))
	var done []string
	for key, val := range table.KVs(in.Namespace) {
		first := in.seen[key]
		if first.value != val {
			first = seen{value: val, since: now}
		}
		seenNow[key] = first
		c, ok := parse(key, val)
		switch {
		case !ok || in.Valid != nil && !in.Valid(c):
			if in.Dropped != nil {
				in.Dropped(key, val)
			}
			done = append(done, key)
		case c.Target == self:
			if in.Run(c) {
				done = append(done, key)
			}
		case !present[c.Target] && now.Sub(first.since) > in.TTL:
			done = append(done, key)
		}
	}
	in.seen = seenNow
	if len(done) == 0 {
		return
	}
	keys := make([]string, len(done))
	for i, k := range done {
		keys[i] = routes.KVKey(in.Namespace, k)
	}
	in.Remove(keys)
}

// parse reads a command's key and value. The target is a node name and
// may hold '/'; the op and subject never do.
func parse(key, val string) (Command, bool) {
	rest, subject, ok1 := cutLast(key)
	target, op, ok2 := cutLast(rest)
	issued, param, _ := strings.Cut(val, " ")
	_, err := strconv.ParseInt(issued, 10, 64)
	if !ok1 || !ok2 || target == "" || err != nil {
		return Command{}, false
	}
	return Command{Target: target, Op: op, Subject: subject, Param: param}, true
}

func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}
