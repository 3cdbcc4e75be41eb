package client

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/namecast/namecast/internal/testutil"
)

// A registration the retry loop has sent when Close begins must not land
// after Close's withdrawal: the agent applies a request whose client gave
// up, so abandoning it left the URL registered until its TTL (seen once
// in CI: examples/dubbo-provider's provider still listed 10 s after it
// exited). Close waits for it, then withdraws.
func TestCloseWithdrawsAfterAnInFlightReplay(t *testing.T) {
	a := newURLAgent(t)
	r := a.registry(t, RegistryOptions{TTL: time.Minute})
	if err := r.Register(context.Background(), provA1); err != nil {
		t.Fatal(err)
	}
	// The agent "restarts": the session loop replays the registration,
	// and the agent holds that PUT as a loaded agent would.
	stall := make(chan struct{})
	a.mu.Lock()
	a.stall = stall
	puts := len(a.writes)
	a.mu.Unlock()
	a.restart(swift)
	testutil.Eventually(t, 5*time.Second, func() error {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.stall != nil || len(a.writes) == puts {
			return errString("the replay's PUT has not reached the agent")
		}
		return nil
	})
	closed := make(chan error, 1)
	go func() { closed <- r.Close() }()
	// Released once Close is done, or after it had time to send its
	// withdrawal: an abandoned PUT is then applied after the DELETE.
	select {
	case <-closed:
		closed <- nil
	case <-time.After(300 * time.Millisecond):
	}
	close(stall)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	a.inWrite.Wait()
	if a.has(provA1) {
		t.Fatalf("after Close the agent still holds %s; writes:\n%s", provA1, strings.Join(a.writeLog(), "\n"))
	}
}

type errString string

func (e errString) Error() string { return string(e) }
