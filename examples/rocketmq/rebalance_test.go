package main

import (
	"fmt"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/namecast/namecast/internal/testutil"
)

// Why this file exists: rocketmq-client-go v2.1.2's consumer Start ends with
// `go client.RebalanceImmediately()`, and that goroutine reads
// rmqClient.close (in InvokeSync, asking the broker for the group's
// consumers) while Shutdown writes it with no lock. A real application
// shuts its consumer down long after that start-up pass; a test shuts it
// down milliseconds later, inside the library's race window, and the race
// detector flags the library about one run in thirty. The library exposes
// nothing to wait on but its logger: every pass of doBalance over a
// subscribed topic ends in one of the log lines below, written by the
// rebalancing goroutine after its read of close. balanceLog counts them
// under a mutex, so a test that saw the start-up pass finish every topic
// has a happens-before edge to all of that goroutine's reads, and its
// Shutdown no longer races them. Our own code still runs under -race.
type balanceLog struct {
	mu     sync.Mutex
	topics map[string]map[string]bool // consumer group -> topics whose balance pass ended since mark
}

// balanced is every way v2.1.2's defaultConsumer.doBalance ends its pass
// over one topic in clustering mode (consumer/consumer.go). A pass that
// succeeds without changing the assignment logs nothing; it cannot happen
// here, where no broker answers the consumer-list query.
var balanced = []string{
	"do balance in group failed, the topic does not exist",
	"do balance in group failed, get consumer id list failed",
	"MessageQueue do balance done",
}

var rebalances = &balanceLog{topics: map[string]map[string]bool{}}

// mark forgets what group's earlier consumers logged; call it before Start.
func (b *balanceLog) mark(group string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.topics[group] = map[string]bool{}
}

// waitStartupRebalance waits until the consumer of group, started after
// mark, has finished its start-up balance pass over topic and over the
// group's retry topic, which Start subscribes as well.
func (b *balanceLog) waitStartupRebalance(t *testing.T, group, topic string) {
	t.Helper()
	want := []string{topic, "%RETRY%" + group} // internal.GetRetryTopic, which we cannot import
	testutil.Eventually(t, 20*time.Second, func() error {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, tp := range want {
			if !b.topics[group][tp] {
				return fmt.Errorf("consumer group %s: no balance pass over %s logged yet (seen %v)", group, tp, b.topics[group])
			}
		}
		return nil
	})
}

func (b *balanceLog) note(msg string, fields map[string]interface{}) {
	for _, m := range balanced {
		if msg != m {
			continue
		}
		group, _ := fields[rlog.LogKeyConsumerGroup].(string)
		topic, _ := fields[rlog.LogKeyTopic].(string)
		b.mu.Lock()
		if b.topics[group] != nil {
			b.topics[group][topic] = true
		}
		b.mu.Unlock()
	}
}

// The rlog.Logger methods: errors are printed as rlog.SetLogLevel("error")
// printed them; everything below is only counted.
func (b *balanceLog) Debug(string, map[string]interface{}) {}
func (b *balanceLog) Info(msg string, fields map[string]interface{}) {
	b.note(msg, fields)
}
func (b *balanceLog) Warning(msg string, fields map[string]interface{}) {
	b.note(msg, fields)
}
func (b *balanceLog) Error(msg string, fields map[string]interface{}) {
	log.Printf("rocketmq-client: %s %s", msg, formatFields(fields))
}
func (b *balanceLog) Fatal(msg string, fields map[string]interface{}) {
	log.Fatalf("rocketmq-client: %s %s", msg, formatFields(fields))
}
func (b *balanceLog) Level(string)            {}
func (b *balanceLog) OutputPath(string) error { return nil }

func formatFields(fields map[string]interface{}) string {
	var s []string
	for k, v := range fields {
		s = append(s, fmt.Sprintf("%s=%v", k, v))
	}
	return strings.Join(s, " ")
}
