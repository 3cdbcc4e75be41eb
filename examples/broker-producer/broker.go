package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/namecast/namecast/client"
)

// broker is the body of PUT /v1/brokers, spelled out as any broker (in any
// language) would send it, plus where to send it.
type broker struct {
	Cluster    string                 `json:"cluster"`
	BrokerName string                 `json:"brokerName"`
	BrokerID   int64                  `json:"brokerId"` // 0: the master
	Addr       string                 `json:"addr"`
	HAAddr     string                 `json:"haAddr"`
	Topics     map[string]topicConfig `json:"topics"`
	TTL        string                 `json:"ttl"` // withdrawn unless registered again within it

	agent string    // http://host:port of the agent
	out   io.Writer // where to report
}

type topicConfig struct {
	ReadQueueNums  int `json:"readQueueNums"`
	WriteQueueNums int `json:"writeQueueNums"`
	Perm           int `json:"perm"`
	TopicSysFlag   int `json:"topicSysFlag"`
}

// requestTimeout bounds one call to the agent, which answers writes at once.
const requestTimeout = 10 * time.Second

// agentURL turns the client's host:port into the base of the HTTP API.
func agentURL(hostport string) string { return "http://" + hostport }

// run registers, re-registers every renew period until ctx is done, then
// unregisters. A failed registration is reported and tried again at the
// next period, as a RocketMQ broker does with an unreachable NameServer.
func (b *broker) run(ctx context.Context, renew time.Duration) error {
	if err := b.register(ctx); err != nil {
		fmt.Fprintf(b.out, "broker: registering failed: %v (trying again in %v)\n", err, renew)
	} else {
		fmt.Fprintf(b.out, "broker: %s registered at %s with ttl %s, renewing every %v\n", b.BrokerName, b.Addr, b.TTL, renew)
	}
	tick := time.NewTicker(renew)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			// ctx is over; withdrawing still deserves a moment.
			stop, cancel := context.WithTimeout(context.Background(), requestTimeout)
			defer cancel()
			if err := b.unregister(stop); err != nil {
				return fmt.Errorf("unregistering the broker: %w", err)
			}
			fmt.Fprintf(b.out, "broker: %s unregistered\n", b.BrokerName)
			return nil
		case <-tick.C:
			if err := b.register(ctx); err != nil && ctx.Err() == nil {
				fmt.Fprintf(b.out, "broker: renewing failed: %v\n", err)
			} else if err == nil {
				fmt.Fprintf(b.out, "broker: %s renewed\n", b.BrokerName)
			}
		}
	}
}

// register sends PUT /v1/brokers, which replaces this broker's
// registration and pushes its TTL back.
func (b *broker) register(ctx context.Context) error {
	body, err := json.Marshal(b)
	if err != nil {
		return err
	}
	return b.call(ctx, http.MethodPut, "/v1/brokers", bytes.NewReader(body))
}

// unregister sends DELETE /v1/brokers/{cluster}/{brokerName}/{brokerId}.
func (b *broker) unregister(ctx context.Context) error {
	path := fmt.Sprintf("/v1/brokers/%s/%s/%d", url.PathEscape(b.Cluster), url.PathEscape(b.BrokerName), b.BrokerID)
	return b.call(ctx, http.MethodDelete, path, nil)
}

func (b *broker) call(ctx context.Context, method, path string, body io.Reader) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, b.agent+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token := os.Getenv(client.EnvHTTPToken); token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}
