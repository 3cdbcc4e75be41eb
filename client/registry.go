package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Registry is Dubbo's RegistryService on top of the local agent: what a Go
// program uses to publish the services it provides and to follow the
// providers, routers and configurators of the services it calls.
//
// It keeps the promises of Dubbo's RegistryService and NotifyListener:
//
//   - Subscribe returns only after the listener has had its first
//     notification, which covers every category the subscription asks for.
//   - Every notification is the complete list of one category of one
//     interface; an empty category arrives as exactly one empty:// URL
//     carrying that category (dubbo.Empty). The URLs a subscription receives
//     are those dubbo.Match selects; interface "*" subscribes to every
//     service, notified per interface and category.
//   - One listener is called by one goroutine at a time, in order, and only
//     when its list changed. While the agent is unreachable nothing is
//     notified: the listener keeps the last list, as Dubbo's registries do
//     on a lost connection.
//   - Failed register, unregister and subscribe calls are retried in the
//     background every RetryPeriod until they succeed or are undone. When
//     the agent restarts, every dynamic URL is registered again (the new
//     agent holds none; persistent rules live on in the cluster) and every
//     watch starts over.
//   - With a CacheFile, the last-known lists are saved after every change
//     and answer Subscribe and Lookup while the agent cannot.
//
// # The check parameter
//
// As in Dubbo's FailbackRegistry, a call whose URL says check=false (or a
// consumer:// registration) never fails because the agent is unreachable:
// the failure is logged and retried. Without check=false the error is
// returned too, but unlike Dubbo, which then forgets the failed call until
// the next reconnect, the Registry keeps retrying it: a provider that
// started while its agent was briefly down appears as soon as the agent
// does. Undo it with Unregister or Unsubscribe. A refusal that cannot heal
// (the agent answers 4xx: a URL it does not accept) is always returned and
// nothing is kept or retried.
//
// A Registry is safe for concurrent use. It owns goroutines (one blocking
// query per watched interface and category, shared by the subscriptions
// that need it; one per subscription to deliver notifications; one each
// for retries, the agent's incarnation and the cache file); Close stops
// them and waits.
type Registry struct {
	c     *Client
	opts  RegistryOptions
	log   *slog.Logger
	cache *cacheFile // nil without RegistryOptions.CacheFile

	ctx    context.Context // done at Close; ends every goroutine and query
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{} // asks the retry loop to run now

	mu      sync.Mutex
	closed  bool
	epoch   uint64                   // grows at every replay; see sync
	regs    map[string]*registration // by canonical URL
	subs    map[subKey]*subscription
	watches map[watchKey]*listWatch
}

// RegistryOptions tune a Registry. The zero value is ready to use.
type RegistryOptions struct {
	// CacheFile is where the last-known URL lists are kept, so that
	// Subscribe and Lookup can answer while the agent is down, say just
	// after this host rebooted. It is rewritten (atomically) after every
	// change. Empty means no cache. Give each process its own file: two
	// processes sharing one overwrite each other's lists.
	CacheFile string

	// RetryPeriod is how often failed calls are retried (Dubbo's
	// retry.period). Zero means DefaultRetryPeriod. Shorter recovers sooner
	// from an agent outage at the cost of more requests during it.
	RetryPeriod time.Duration

	// Logger receives what the Registry cannot return: background retries,
	// replays after an agent restart, cache file trouble. Nil discards.
	Logger *slog.Logger

	// TTL, when positive, registers dynamic URLs with this time to live
	// and renews them every TTL/3, so that the agent withdraws them if this
	// process dies without unregistering while the agent lives on. Without
	// it a crashed process's URLs stay registered until its agent stops.
	// It must be from 1s to 24h; persistent (dynamic=false) URLs never
	// take one.
	TTL time.Duration
}

// DefaultRetryPeriod is Dubbo's default retry.period.
const DefaultRetryPeriod = 5 * time.Second

// ErrRegistryClosed is returned by calls made after Close.
var ErrRegistryClosed = errors.New("namecast: registry is closed")

// closeTimeout bounds how long Close spends unregistering: an unreachable
// agent must not hold up a process that is shutting down.
const closeTimeout = 5 * time.Second

// NewRegistry returns a Registry that registers and subscribes through c.
// It reads the cache file, if any, and starts watching the agent so that a
// restart of the agent is noticed; it does not wait for the agent.
func NewRegistry(c *Client, opts RegistryOptions) (*Registry, error) {
	if c == nil {
		return nil, errors.New("namecast: NewRegistry needs a Client")
	}
	if opts.RetryPeriod < 0 {
		return nil, fmt.Errorf("namecast: RetryPeriod %v is negative", opts.RetryPeriod)
	}
	if opts.RetryPeriod == 0 {
		opts.RetryPeriod = DefaultRetryPeriod
	}
	if opts.TTL != 0 && (opts.TTL < time.Second || opts.TTL > 24*time.Hour) {
		return nil, fmt.Errorf("namecast: TTL %v must be from 1s to 24h (or 0 for none)", opts.TTL)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "registry", "agent", c.Address())
	r := &Registry{
		c: c, opts: opts, log: log,
		wake:    make(chan struct{}, 1),
		regs:    map[string]*registration{},
		subs:    map[subKey]*subscription{},
		watches: map[watchKey]*listWatch{},
	}
	if opts.CacheFile != "" {
		cache, err := loadCache(opts.CacheFile, log)
		if err != nil {
			return nil, err
		}
		r.cache = cache
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.mu.Lock()
	r.goLocked(r.retryLoop)
	r.goLocked(r.sessionLoop)
	if r.cache != nil {
		r.goLocked(func() { r.cache.run(r.ctx) })
	}
	r.mu.Unlock()
	return r, nil
}

// goLocked runs f on a goroutine Close waits for. It refuses once the
// registry is closed, so no goroutine starts after Close began waiting.
// r.mu must be held.
func (r *Registry) goLocked(f func()) bool {
	if r.closed {
		return false
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
	return true
}

// Close ends the registry in this order: it stops every watch, retry and
// notification (no listener is called once Close returns), unregisters the
// dynamic URLs registered through it (persistent rules stay, as Dubbo's
// destroy leaves them), and writes the cache file. It waits for every
// goroutine the registry started, so it must not be called from a listener.
// Calls after the first return nil.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	err := r.unregisterAll()
	if r.cache != nil {
		err = errors.Join(err, r.cache.flush())
	}
	return err
}

// isClosed reports whether Close has begun.
func (r *Registry) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// poke wakes whoever waits on ch without blocking: ch has room for one
// signal, and one pending signal is as good as many.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
