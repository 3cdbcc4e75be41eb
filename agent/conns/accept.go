package conns

import (
	"context"
	"log/slog"
	"net"
	"time"
)

// acceptLoop accepts connections on ln until ctx is done or ln is closed,
// and hands each to take, on this goroutine. take returns false when the
// set is closing (it has closed the connection), and the loop returns.
//
// An error while ctx is live (out of file descriptors, say) is logged and
// retried after a back-off doubling from 5 ms to 1 s, as net/http does, so
// a door survives a burst of connections instead of stopping for good.
func acceptLoop(ctx context.Context, ln net.Listener, log *slog.Logger, take func(net.Conn) bool) {
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
			return
		}
	}
}
