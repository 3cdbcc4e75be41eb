package client

import (
	"context"
	"fmt"

	"github.com/namecast/namecast/dubbo"
)

// Lookup answers once what a subscription to url would be told (Dubbo's
// lookup): every matching URL of every category asked for, without the
// empty:// placeholders, so the answer may be empty. It reads what a
// running watch already holds, else asks the agent, else the cache file;
// it fails only when none of them knows.
func (r *Registry) Lookup(ctx context.Context, url string) ([]string, error) {
	u, cats, err := parseSubscription(url)
	if err != nil {
		return nil, fmt.Errorf("namecast: lookup: %w", err)
	}
	if r.isClosed() {
		return nil, ErrRegistryClosed
	}
	ifaces := []string{u.Interface()}
	if u.Interface() == dubbo.Any {
		if ifaces, err = r.currentServices(ctx); err != nil {
			return nil, fmt.Errorf("namecast: lookup %s: %w", u, err)
		}
	}
	var out []string
	for _, iface := range ifaces {
		for _, c := range cats {
			parsed, err := r.current(ctx, watchKey{iface, c})
			if err != nil {
				return nil, fmt.Errorf("namecast: lookup %s: %w", u, err)
			}
			for _, p := range parsed {
				if dubbo.Match(u, p) {
					out = append(out, p.String())
				}
			}
		}
	}
	return out, nil
}

// current is the list of key: a watch's if one has answered (it is as
// fresh as a new query), else the agent's, else the cache file's.
func (r *Registry) current(ctx context.Context, key watchKey) ([]dubbo.URL, error) {
	r.mu.Lock()
	if w := r.watches[key]; w != nil && w.known {
		parsed := w.parsed
		r.mu.Unlock()
		return parsed, nil
	}
	r.mu.Unlock()
	list, _, err := r.fetch(ctx, key, nil)
	if err == nil {
		r.cache.put(key, list)
		return r.parseAll(list), nil
	}
	if cached, ok := r.cache.get(key); ok {
		r.log.Warn("agent unreachable; answering from the cache file", "interface", key.iface, "category", key.category, "err", err)
		return r.parseAll(cached), nil
	}
	return nil, fmt.Errorf("no list of %s/%s from the agent (%w) nor from a cache file", key.iface, key.category, err)
}

// currentServices is current for the list of interfaces; the cache file
// knows the interfaces it holds lists for.
func (r *Registry) currentServices(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	if w := r.watches[servicesKey]; w != nil && w.known {
		list := w.list
		r.mu.Unlock()
		return list, nil
	}
	r.mu.Unlock()
	list, _, err := r.fetch(ctx, servicesKey, nil)
	if err == nil {
		return list, nil
	}
	if cached := r.cache.interfaces(); len(cached) > 0 {
		return cached, nil
	}
	return nil, fmt.Errorf("no service list from the agent (%w) nor from a cache file", err)
}
