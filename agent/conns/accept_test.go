package conns

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// flakyListener fails its first Accepts, then hands out pipe conns.
type flakyListener struct {
	fails    atomic.Int32
	accepted atomic.Int32
	closed   chan struct{}
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, errors.New("accept: too many open files")
	}
	select {
	case <-l.closed:
		return nil, net.ErrClosed
	default:
	}
	l.accepted.Add(1)
	a, _ := net.Pipe()
	return a, nil
}
func (l *flakyListener) Close() error   { return nil }
func (l *flakyListener) Addr() net.Addr { return &net.TCPAddr{} }

func TestAcceptLoopRetriesAfterErrorsAndStopsWhenRefused(t *testing.T) {
	l := &flakyListener{closed: make(chan struct{})}
	l.fails.Store(3)
	var took int
	done := make(chan struct{})
	go func() {
		defer close(done)
		acceptLoop(context.Background(), l, slog.New(slog.DiscardHandler), func(net.Conn) bool {
			took++
			return took < 2 // the second connection finds the server closing
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("acceptLoop did not return after take refused a connection")
	}
	if took != 2 || l.accepted.Load() != 2 {
		t.Fatalf("took %d, accepted %d; want 2 and 2 after 3 failed accepts", took, l.accepted.Load())
	}
}

func TestAcceptLoopReturnsWhenContextEnds(t *testing.T) {
	l := &flakyListener{closed: make(chan struct{})}
	l.fails.Store(1 << 30) // always failing: only ctx can end it
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		acceptLoop(ctx, l, slog.New(slog.DiscardHandler), func(net.Conn) bool { return true })
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("acceptLoop kept retrying after its context ended")
	}
}
