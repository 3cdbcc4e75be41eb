package nacos

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// The gRPC port holds at most MaxConns connections: past it a new one is
// closed unanswered and the door says why in its log; one that ends makes
// room.
func TestGRPCConnectionsPastMaxConnsAreRefused(t *testing.T) {
	var logs testutil.Buffer
	s, _ := startServer(t, func(c *Config) {
		c.MaxConns = 1
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	held := dial(t, s)
	// ask opens an HTTP/2 connection (the client preface and its empty
	// SETTINGS frame), which the gRPC port answers with its SETTINGS on a
	// connection it took and not at all on one it refused.
	ask := func() (string, error) {
		nc, err := net.Dial("tcp", s.GRPCAddr())
		if err != nil {
			return "", err
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := nc.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")); err != nil {
			return "", err
		}
		var h [9]byte // a frame header: length, type, flags, stream
		if _, err := io.ReadFull(nc, h[:]); err != nil {
			return "", err
		}
		return fmt.Sprintf("frame type %d", h[3]), nil
	}
	if line, err := ask(); err == nil {
		t.Fatalf("a connection past MaxConns 1 was answered: %q", line)
	}
	if !strings.Contains(logs.String(), "MaxConns reached") {
		t.Errorf("no log line said why the connection was refused; logs:\n%s", logs.String())
	}
	held.Close()
	testutil.Eventually(t, 10*time.Second, func() error {
		line, err := ask()
		if err != nil {
			return fmt.Errorf("%d held: %w", s.grpcConns.Len(), err)
		}
		if line != "frame type 4" {
			return fmt.Errorf("answered with %s; want SETTINGS (4)", line)
		}
		return nil
	})
}
