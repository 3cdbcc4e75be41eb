package client

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"time"
)

// watch is the blocking-query loop every Watch method runs:
//
//  1. Ask once without an index, then with the last answer's index, so the
//     agent holds each request until this view changed or watchWait passed.
//     The index is the view's own (the last change its answer saw), so
//     changes elsewhere in the cluster do not wake the watch. An answer
//     that did not pass the index asked for (the wait ran out, or the
//     agent restarted and its indexes started over) is followed by one
//     plain query: see nextIndex.
//  2. A wake-up means "maybe changed" (a view's index can move for a change
//     that leaves this answer alike): fn hears only answers that differ
//     from the last it heard.
//  3. A 404 is an answer ("not there yet"), not a failure: fn hears it with
//     the error, and the loop blocks on its index until the thing appears.
//  4. Any other failure goes to fn, then the loop waits (backoffMin,
//     doubling up to backoffMax) and asks again without an index, so once
//     the agent answers fn hears its state, changed or not. A 4xx other than
//     404 would fail the same way forever: fn hears it and watch returns it.
//
// watch returns only then, or with ctx's error once ctx is done.
func watch[T any](ctx context.Context, c *Client, get func(context.Context, *QueryOptions) (T, *QueryMeta, error), fn func(T, error)) error {
	var (
		index       uint64
		last        T
		lastMissing bool
		heard       bool // fn heard an answer since the last failure
		backoff     time.Duration
	)
	for {
		v, meta, err := get(ctx, &QueryOptions{WaitIndex: index, WaitTime: c.watchWait})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		missing := IsNotFound(err) && meta != nil
		if err != nil && !missing {
			var zero T
			fn(zero, err)
			if permanent(err) {
				return err
			}
			index, heard = 0, false
			backoff = min(max(2*backoff, c.backoffMin), c.backoffMax)
			if !sleep(ctx, backoff) {
				return ctx.Err()
			}
			continue
		}
		backoff = 0
		if !heard || missing != lastMissing || !reflect.DeepEqual(v, last) {
			fn(v, err)
			heard, last, lastMissing = true, v, missing
		}
		index = nextIndex(index, meta)
		// An answer without an index cannot block; pace the loop instead of
		// spinning on an agent that breaks the contract.
		if index == 0 && !sleep(ctx, c.backoffMin) {
			return ctx.Err()
		}
	}
}

func permanent(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code >= 400 && se.Code < 500 && se.Code != http.StatusNotFound
}

// sleep waits d, or less if ctx is done first, and reports whether it slept.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// WatchTopicRoute calls fn with topic's route, and again whenever it
// changes. While nobody serves the topic, fn gets an error for which
// IsNotFound holds. Other errors reach fn too and the watch retries with
// backoff, except for a refusal that cannot succeed (400), which ends it.
// WatchTopicRoute blocks until ctx is done and returns ctx's error, or
// returns that refusal.
func (c *Client) WatchTopicRoute(ctx context.Context, topic string, fn func(TopicRoute, error)) error {
	return watch(ctx, c, func(ctx context.Context, q *QueryOptions) (TopicRoute, *QueryMeta, error) {
		return c.TopicRoute(ctx, topic, q)
	}, fn)
}

// WatchTopics is WatchTopicRoute for the list of topics.
func (c *Client) WatchTopics(ctx context.Context, fn func([]string, error)) error {
	return watch(ctx, c, c.Topics, fn)
}

// WatchTopicSummaries is WatchTopicRoute for the topics with their
// summaries.
func (c *Client) WatchTopicSummaries(ctx context.Context, fn func([]TopicSummary, error)) error {
	return watch(ctx, c, c.TopicSummaries, fn)
}

// WatchServiceSummaries is WatchTopicRoute for the interfaces with their
// summaries.
func (c *Client) WatchServiceSummaries(ctx context.Context, fn func([]ServiceSummary, error)) error {
	return watch(ctx, c, c.ServiceSummaries, fn)
}

// WatchClusters is WatchTopicRoute for the cluster table.
func (c *Client) WatchClusters(ctx context.Context, fn func(ClusterInfo, error)) error {
	return watch(ctx, c, c.Clusters, fn)
}

// WatchMembers is WatchTopicRoute for the member list.
func (c *Client) WatchMembers(ctx context.Context, fn func([]Member, error)) error {
	return watch(ctx, c, c.Members, fn)
}

// WatchServices is WatchTopicRoute for the list of interfaces.
func (c *Client) WatchServices(ctx context.Context, fn func([]string, error)) error {
	return watch(ctx, c, c.Services, fn)
}

// WatchURLs is WatchTopicRoute for the URLs of iface in category: Dubbo's
// subscribe. fn gets the full list on every change.
func (c *Client) WatchURLs(ctx context.Context, iface, category string, fn func([]string, error)) error {
	return watch(ctx, c, func(ctx context.Context, q *QueryOptions) ([]string, *QueryMeta, error) {
		return c.URLs(ctx, iface, category, q)
	}, fn)
}
