// Package listener holds what the agent's doors (the RocketMQ and
// ZooKeeper ports) share below their protocols: the accept loop, with the
// back-off net/http uses when accepting fails for a while, and an
// in-memory listener for tests (Memory).
package listener

import (
	"context"
	"log/slog"
	"net"
	"time"
)

// Accept accepts connections on ln until ctx is done or ln is closed, and
// hands each to take. take runs on the accept goroutine: it registers the
// connection and starts its goroutines, or returns false when the server is
// closing, and then Accept closes the connection and returns.
//
// An error while ctx is live (out of file descriptors, say) is logged and
// retried after a back-off doubling from 5 ms to 1 s, so a door survives a
// burst of connections instead of stopping for good.
func Accept(ctx context.Context, ln net.Listener, log *slog.Logger, take func(net.Conn) bool) {
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			log.Warn("accept failed; retrying", "err", err, "in", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		if !take(nc) {
			nc.Close()
			return
		}
	}
}
