package gossip

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/namecast/namecast/internal/testutil"
	"github.com/namecast/namecast/routes"
)

// pair is a sender holding n records and a receiver that knows it as a
// live member, both unstarted: the test carries the messages.
func pair(t *testing.T, n int) (sender, receiver *Gossip, sent *[][]byte) {
	t.Helper()
	sender, receiver = newUnstarted(t, "sender"), newUnstarted(t, "receiver")
	sender.upsert(&memberlist.Node{Name: "receiver", Addr: []byte{127, 0, 0, 1}, Port: 1, Meta: []byte(`{"inc":"1"}`)}, false)
	receiver.upsert(&memberlist.Node{Name: "sender", Addr: []byte{127, 0, 0, 1}, Port: 2, Meta: []byte(`{"inc":"1"}`)}, false)
	for len(sender.work) > 0 { // upsert's greeting (a summary) needs a network
		<-sender.work
	}
	var recs []routes.Record
	for i := range n {
		recs = append(recs, routes.Record{Queue: &routes.Queue{Topic: fmt.Sprintf("topic-%05d", i), BrokerName: "b", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}})
	}
	sender.table.ApplyLocal(recs, nil)
	sent = new([][]byte)
	sender.sentReliable = func(msg []byte) { *sent = append(*sent, bytes.Clone(msg)) }
	return sender, receiver, sent
}

// runWork runs what NotifyMsg handed to the (absent) worker.
func runWork(g *Gossip) {
	for {
		select {
		case f := <-g.work:
			f()
		default:
			return
		}
	}
}

// A pull names the encodings its sender reads: an agent that predates the
// binary one sends no "b" and is answered in JSON; a newer one gets
// msgParts. Either way the receiver ends with the sender's digest entry.
func TestPullIsAnsweredInTheEncodingItAsks(t *testing.T) {
	defer func(m int) { maxSnapshotBytes = m }(maxSnapshotBytes)
	maxSnapshotBytes = 32 << 10
	for _, tc := range []struct {
		name string
		pull []byte
		kind byte
	}{
		{"old puller", append([]byte{msgPull}, `{"f":"receiver","o":["sender"]}`...), msgSnapshots},
		{"new puller", encode(msgPull, pull{From: "receiver", Origins: []string{"sender"}, Bin: routes.BinaryVersion}), msgParts},
		{"newer puller", encode(msgPull, pull{From: "receiver", Origins: []string{"sender"}, Bin: routes.BinaryVersion + 1}), msgParts},
		{"deflating puller", encode(msgPull, pull{From: "receiver", Origins: []string{"sender"}, Bin: routes.BinaryVersion, Deflate: true}), msgPartsDeflated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sender, receiver, sent := pair(t, 3000)
			(*delegate)(sender).NotifyMsg(tc.pull)
			runWork(sender)
			total := 0
			for _, m := range *sent {
				if m[0] != tc.kind {
					t.Fatalf("answered with message type %d, want %d", m[0], tc.kind)
				}
				if len(m) > maxSnapshotBytes+2*snapshotOverhead {
					t.Fatalf("a %d-byte message, over the %d cap", len(m), maxSnapshotBytes)
				}
				total += len(m)
				(*delegate)(receiver).NotifyMsg(m)
			}
			if len(*sent) < 2 {
				t.Fatalf("%d messages for 3000 records in 32 KiB: want several", len(*sent))
			}
			got, _ := receiver.table.Entry("sender")
			want, _ := sender.table.Entry("sender")
			if got != want {
				t.Fatalf("receiver holds %+v of the sender, which holds %+v", got, want)
			}
			t.Logf("%d messages, %d bytes", len(*sent), total)
		})
	}
}

// A msgParts message in a version this agent does not read is dropped
// whole and said so at warning level: never merged by guesswork.
func TestPartsOfAnUnknownVersionAreRefusedLoudly(t *testing.T) {
	sender, receiver, sent := pair(t, 100)
	var logged bytes.Buffer
	receiver.log = &slogLogger{slog.New(slog.NewTextHandler(&logged, nil))}
	sender.sendSnapshots(pull{From: "receiver", Origins: []string{"sender"}, Bin: routes.BinaryVersion})
	if len(*sent) != 1 {
		t.Fatalf("%d messages for 100 records", len(*sent))
	}
	msg := (*sent)[0]
	msg[1] = routes.BinaryVersion + 1
	(*delegate)(receiver).NotifyMsg(msg)
	if _, n := receiver.table.Len(); n != 0 {
		t.Fatalf("merged %d records from parts of an unknown version", n)
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "version 2") {
		t.Fatalf("no warning naming the version: %q", logged.String())
	}
	// A corrupt part stops the message there; the log says which.
	msg[1] = routes.BinaryVersion
	msg[len(msg)-1] ^= 0xff
	logged.Reset()
	(*delegate)(receiver).NotifyMsg(msg[:len(msg)-3])
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "part 0") {
		t.Fatalf("no warning for a truncated part: %q", logged.String())
	}
}

// A joiner pulls from origins that have not heard of it yet: the answer
// waits until the joiner is known instead of going nowhere (the joiner
// then waited out its pull's 10 s timeout), and gives up on a name that
// never turns up.
func TestPullFromAnUnknownMemberIsAnsweredOnceItIsKnown(t *testing.T) {
	sender, _, sent := pair(t, 10)
	t.Cleanup(func() { _ = sender.Shutdown() })
	(*delegate)(sender).NotifyMsg(encode(msgPull, pull{From: "late", Origins: []string{"sender"}, Bin: routes.BinaryVersion}))
	runWork(sender)
	if len(*sent) != 0 {
		t.Fatal("answered a member we know nothing of")
	}
	sender.upsert(&memberlist.Node{Name: "late", Addr: []byte{127, 0, 0, 1}, Port: 3, Meta: []byte(`{"inc":"1"}`)}, false)
	testutil.Eventually(t, 10*time.Second, func() error {
		runWork(sender)
		for _, m := range *sent {
			if m[0] == msgParts {
				return nil
			}
		}
		return fmt.Errorf("no answer after the member became known (%d messages)", len(*sent))
	})
	if n := sender.waitingAnswers.Load(); n != 0 {
		t.Fatalf("%d answers still waiting", n)
	}
}
