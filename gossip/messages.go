package gossip

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/namecast/namecast/routes"
)

// Every user message is one type byte and a JSON body. JSON keeps the wire
// readable in captures; the hot path (one op per broadcast) is ~150 bytes.
const (
	msgOps       byte = 1 + iota // routes.Delta, gossiped
	msgNotice                    // notice: an origin changed too much to gossip
	msgSummary                   // summary: anti-entropy probe, UDP
	msgDigest                    // digestMsg: full digest, TCP
	msgPull                      // pull: snapshots wanted, TCP
	msgSnapshots                 // snapshots: the answer, TCP
	msgQuery                     // queryMsg: run a named handler, TCP
	msgAnswer                    // answerMsg: its result, TCP
	msgLeaving                   // leaving: a member leaves gracefully, TCP
)

// maxSnapshotBytes caps one snapshots message well below memberlist's 20 MiB
// user-message limit; larger answers go as several messages, and larger
// snapshots as several parts. A var so tests can make parts small.
//
// It is also what a sync holds in flight: memberlist reads a message whole,
// and it is decoded into ops (~2x its size) before the merge, so the cap
// adds ~3x itself to a joiner's peak heap, and twice that to its RSS at
// GOGC=100. 1 MiB keeps that ~6 MB for a sidecar whose table is ~28 MB;
// the cost is a TCP message per MiB (ten for 100,100 records).
var maxSnapshotBytes = 1 << 20

// answerBufferStart is the capacity an answer's message buffer starts
// with; it grows to what the answer holds, up to a message.
const answerBufferStart = 16 << 10

// snapshotOverhead is what a snapshot adds to its ops when encoded: its
// origin, incarnation, seq and key range.
const snapshotOverhead = 1 << 10

// notice announces a change too large to gossip. Peers behind pull it from
// the origin, or, for rules, which no member owns, from From: the agent that
// made the change (relays keep it).
type notice struct {
	Origin string             `json:"o"`
	Entry  routes.DigestEntry `json:"e"`
	From   string             `json:"f,omitempty"`
}

// leaving carries the incarnation that leaves, so a notice that arrives
// after the member restarted (a slow sender) cannot retire its successor.
type leaving struct {
	Name string `json:"n"`
	Inc  uint64 `json:"i,omitempty"`
}

type summary struct {
	From string `json:"f"`
	Sum  uint64 `json:"s"`
}

type digestMsg struct {
	From   string        `json:"f"`
	Digest routes.Digest `json:"d"`
	// Reply asks the receiver to send its own digest back, so both sides
	// learn what they lack from one exchange.
	Reply bool `json:"r,omitempty"`
}

type pull struct {
	From    string   `json:"f"`
	Origins []string `json:"o"`
	// Bin is the highest version of routes' binary part encoding the
	// puller reads (it reads every version from 1 up): the answer comes
	// as msgParts in it. Zero, as an agent that predates it sends, asks
	// for JSON (msgSnapshots).
	Bin int `json:"b,omitempty"`
	// Deflate says the puller reads msgPartsDeflated (parts.go). An agent
	// that predates it neither asks for it nor sends it.
	Deflate bool `json:"z,omitempty"`
}

type snapshots struct {
	From  string            `json:"f"`
	Snaps []routes.Snapshot `json:"s"`
}

func encode(kind byte, v any) []byte {
	body, err := json.Marshal(v)
	if err != nil {
		// Only our own plain structs are encoded here.
		panic(fmt.Sprintf("gossip: encoding message %d: %v", kind, err))
	}
	return append([]byte{kind}, body...)
}

var errEmpty = errors.New("empty message")

// decode splits a received message into its type and body; the body is
// decoded by the caller into the type's struct.
func decode(buf []byte, v any) error {
	if len(buf) < 2 {
		return errEmpty
	}
	return json.Unmarshal(buf[1:], v)
}
