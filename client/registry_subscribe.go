package client

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/namecast/namecast/dubbo"
)

// subKey identifies a subscription: Dubbo keys them by full URL and
// listener, so the same URL with two listeners is two subscriptions.
type subKey struct {
	url      string
	listener NotifyListener
}

// Subscribe follows the URLs that match url (Dubbo's subscribe), such as
//
//	consumer://10.0.0.9/com.foo.BarService?category=providers,routers&version=1.0.0
//
// The category parameter is a comma list, "*" or "-x" exclusions (default
// providers); interface, group, version and classifier select as
// dubbo.Match says, and interface "*" follows every service.
//
// Subscribe returns once listener has had its first notification: one call
// per category (per interface and category for "*"), from the agent, or
// from the cache file when the agent cannot answer. With neither, the
// subscription stays in place and is retried until the agent answers,
// and Subscribe returns the error unless url says check=false.
// Subscribing the same url and listener again adds nothing; it returns the
// error again while the first notification is still missing.
func (r *Registry) Subscribe(ctx context.Context, url string, listener NotifyListener) error {
	s, err := newSubscription(url, listener)
	if err != nil {
		return err
	}
	key := subKey{s.url.String(), listener}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrRegistryClosed
	}
	if old, dup := r.subs[key]; dup {
		r.mu.Unlock()
		return r.resubscribed(old)
	}
	r.subs[key] = s
	if s.wildcard {
		r.attachLocked(s, servicesKey)
	} else {
		for _, c := range s.cats {
			r.attachLocked(s, watchKey{s.url.Interface(), c})
		}
	}
	r.mu.Unlock()

	waitErr := r.awaitWatches(ctx, s)
	first, cached, ok := r.firstBatch(s, true)
	if ok {
		if cached {
			r.log.Warn("agent unreachable; notified the cached list", "url", s.url.String())
		}
		s.notify(r.ctx, first)
	}
	r.mu.Lock()
	r.goLocked(func() { r.deliver(s) })
	r.mu.Unlock()
	if ok {
		return nil
	}
	err = errors.Join(waitErr, r.watchError(s))
	if r.isClosed() {
		err = ErrRegistryClosed
	}
	if !checkParam(s.url) {
		r.log.Warn("subscribe failed; retrying in the background", "url", s.url.String(), "err", err)
		return nil
	}
	return fmt.Errorf("namecast: subscribe %s failed (retrying in the background): %w", s.url, err)
}

// resubscribed answers a Subscribe of a subscription that exists: fine if
// it has had its first notification, else still failing as before.
func (r *Registry) resubscribed(s *subscription) error {
	err := r.watchError(s)
	if s.isStarted() || err == nil || !checkParam(s.url) {
		return nil
	}
	return fmt.Errorf("namecast: subscribe %s still failing (retrying in the background): %w", s.url, err)
}

// Unsubscribe ends the subscription of url and listener (Dubbo's
// unsubscribe, matched on the full URL); it is ignored if there is none.
// The listener is not called after Unsubscribe returns, except to finish
// a call already under way.
func (r *Registry) Unsubscribe(url string, listener NotifyListener) {
	u, err := dubbo.Parse(url)
	if err != nil || listener == nil || !reflect.TypeOf(listener).Comparable() {
		return
	}
	key := subKey{u.String(), listener}
	r.mu.Lock()
	s := r.subs[key]
	if s != nil {
		delete(r.subs, key)
		for k := range s.watches {
			r.detachLocked(s, k)
		}
	}
	r.mu.Unlock()
	if s != nil {
		s.stop()
	}
}

// newSubscription checks url and listener before anything is started.
func newSubscription(url string, l NotifyListener) (*subscription, error) {
	if l == nil {
		return nil, errors.New("namecast: subscribe: listener is nil")
	}
	if !reflect.TypeOf(l).Comparable() {
		return nil, fmt.Errorf("namecast: subscribe: listener type %T is not comparable; pass a pointer (or use NotifyFunc)", l)
	}
	u, cats, err := parseSubscription(url)
	if err != nil {
		return nil, fmt.Errorf("namecast: subscribe: %w", err)
	}
	return &subscription{
		url: u, listener: l, cats: cats, wildcard: u.Interface() == dubbo.Any,
		watches:   map[watchKey]*listWatch{},
		latest:    map[watchKey][]string{},
		delivered: map[watchKey][]string{},
		gone:      map[watchKey]bool{},
		signal:    make(chan struct{}, 1),
		done:      make(chan struct{}),
	}, nil
}

// parseSubscription reads a subscription (or lookup) URL and the
// categories it asks for, refusing what the agent could never answer.
func parseSubscription(url string) (dubbo.URL, []string, error) {
	u, err := dubbo.Parse(url)
	if err != nil {
		return dubbo.URL{}, nil, err
	}
	iface := u.Interface()
	if iface == "" {
		return dubbo.URL{}, nil, fmt.Errorf("url %s names no interface", u)
	}
	if iface != dubbo.Any && strings.ContainsAny(iface, "/,*") {
		return dubbo.URL{}, nil, fmt.Errorf("interface %q must be one name or \"*\": no '/', ',' or '*'", iface)
	}
	cats := dubbo.Categories(u)
	for _, c := range cats {
		if strings.Contains(c, "/") {
			return dubbo.URL{}, nil, fmt.Errorf("category %q must not contain '/'", c)
		}
	}
	return u, cats, nil
}

// awaitWatches waits until every watch s follows has answered or failed
// once. Interface "*" attaches a watch per service when the service list
// arrives, so the set is read again after each wait.
func (r *Registry) awaitWatches(ctx context.Context, s *subscription) error {
	for {
		var ready <-chan struct{}
		r.mu.Lock()
		for _, w := range s.watches {
			if !w.isReady {
				ready = w.ready
				break
			}
		}
		r.mu.Unlock()
		if ready == nil {
			return nil
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return ctx.Err()
		case <-r.ctx.Done():
			return ErrRegistryClosed
		}
	}
}

// watchError is why a watch of s has no answer.
func (r *Registry) watchError(s *subscription) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range sortedKeys(s.watches) {
		if w := s.watches[k]; !w.known && w.err != nil {
			return w.err // the others failed alike: the agent is down
		}
	}
	return nil
}

func sortedKeys(m map[watchKey]*listWatch) []watchKey {
	keys := make([]watchKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys(nil))
	return keys
}
