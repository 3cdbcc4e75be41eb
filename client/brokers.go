package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// RegisterBroker registers (or replaces, or renews) one broker and its
// topics on the agent, which owns the registration from then on.
func (c *Client) RegisterBroker(ctx context.Context, reg BrokerRegistration) (RegisterBrokerResult, error) {
	var out RegisterBrokerResult
	err := c.write(ctx, http.MethodPut, "/v1/brokers", nil, reg, &out)
	return out, err
}

// UnregisterBroker withdraws one broker registered on the agent.
func (c *Client) UnregisterBroker(ctx context.Context, cluster, brokerName string, brokerID int64) error {
	path := segments("v1", "brokers", cluster, brokerName, strconv.FormatInt(brokerID, 10))
	return c.write(ctx, http.MethodDelete, path, nil, nil, nil)
}

// Topics lists every topic with a route, sorted.
func (c *Client) Topics(ctx context.Context, q *QueryOptions) ([]string, *QueryMeta, error) {
	var out struct {
		Topics []string `json:"topics"`
	}
	meta, err := c.query(ctx, "/v1/topics", nil, q, &out)
	return out.Topics, meta, err
}

// TopicSummaries lists every topic with a route, sorted, each with its
// clusters, brokers and queues.
func (c *Client) TopicSummaries(ctx context.Context, q *QueryOptions) ([]TopicSummary, *QueryMeta, error) {
	var out struct {
		Topics []TopicSummary `json:"topics"`
	}
	meta, err := c.query(ctx, "/v1/topics", url.Values{"detail": {""}}, q, &out)
	return out.Topics, meta, err
}

// TopicRoute answers where topic's queues live. A topic nobody serves is a
// StatusError for which IsNotFound holds; its meta still carries the index
// to block on until the topic appears.
func (c *Client) TopicRoute(ctx context.Context, topic string, q *QueryOptions) (TopicRoute, *QueryMeta, error) {
	var route TopicRoute
	meta, err := c.query(ctx, segments("v1", "topics", topic), nil, q, &route)
	return route, meta, err
}

// Clusters returns the cluster table.
func (c *Client) Clusters(ctx context.Context, q *QueryOptions) (ClusterInfo, *QueryMeta, error) {
	var ci ClusterInfo
	meta, err := c.query(ctx, "/v1/clusters", nil, q, &ci)
	return ci, meta, err
}
