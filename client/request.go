package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// QueryOptions turn a read into a blocking query.
type QueryOptions struct {
	// WaitIndex makes the query block until the agent's index passes it
	// (or WaitTime ends). Pass the LastIndex of the previous answer. Zero
	// answers at once.
	WaitIndex uint64

	// WaitTime bounds a blocking query. Zero lets the agent choose; the
	// agent caps it at 10 minutes.
	WaitTime time.Duration
}

// QueryMeta describes the answer to a read.
type QueryMeta struct {
	// LastIndex is the index of the last change the answer could see: the
	// WaitIndex of the next blocking query. Each view (a topic's route, a
	// service's URLs, a list) has its own, so a blocking query wakes for
	// its own changes, not every change in the cluster. It may still move
	// without this answer changing; and it starts over when the agent
	// restarts.
	LastIndex uint64

	// RequestTime is how long the agent took to answer, blocking included.
	RequestTime time.Duration
}

// maxErrorBody bounds how much of an error answer is read: the agent's
// messages are one line, anything longer is not from the agent.
const maxErrorBody = 64 << 10

// segments escapes each path segment, so a name with '/', '?' or '%' stays
// one segment.
func segments(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}

// formatDuration writes whole seconds as "30s", as the contract shows them,
// and anything finer in Go's notation; the agent parses both.
func formatDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// query sends a GET, decodes a 2xx answer into out, and returns the meta of
// every answer the agent gave, refusals included: a 404 carries an index a
// watch can block on.
func (c *Client) query(ctx context.Context, path string, params url.Values, q *QueryOptions, out any) (*QueryMeta, error) {
	if q != nil {
		if params == nil {
			params = url.Values{}
		}
		if q.WaitIndex != 0 {
			params.Set("index", strconv.FormatUint(q.WaitIndex, 10))
		}
		if q.WaitTime > 0 {
			params.Set("wait", formatDuration(q.WaitTime))
		}
	}
	start := time.Now()
	resp, err := c.send(ctx, http.MethodGet, path, params, nil)
	if err != nil {
		return nil, err
	}
	defer closeBody(resp)
	meta := &QueryMeta{RequestTime: time.Since(start)}
	if s := resp.Header.Get(IndexHeader); s != "" {
		if meta.LastIndex, err = strconv.ParseUint(s, 10, 64); err != nil {
			return nil, fmt.Errorf("namecast: GET %s: bad %s %q", path, IndexHeader, s)
		}
	}
	if err := decode(resp, path, out); err != nil {
		return meta, err
	}
	return meta, nil
}

// write sends a PUT, POST or DELETE with in (if not nil) as its JSON body
// and decodes the answer into out (if not nil).
func (c *Client) write(ctx context.Context, method, path string, params url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("namecast: %s %s: encoding body: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	resp, err := c.send(ctx, method, path, params, body)
	if err != nil {
		return err
	}
	defer closeBody(resp)
	return decode(resp, path, out)
}

func (c *Client) send(ctx context.Context, method, path string, params url.Values, body io.Reader) (*http.Response, error) {
	// Parsing base+path keeps the escaping segments chose (url.URL.RawPath).
	u, err := url.Parse(c.base + path)
	if err != nil {
		return nil, fmt.Errorf("namecast: %s %s: %w", method, path, err)
	}
	u.RawQuery = params.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("namecast: %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil || method == http.MethodPost {
		// The agent refuses a POST that does not say it is JSON, body or
		// not: that is how it tells us from a web page's form.
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return c.hc.Do(req)
}

// decode turns a refusal into a *StatusError and decodes a success into out.
func decode(resp *http.Response, path string, out any) error {
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError(resp)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("namecast: %s %s: decoding answer: %w", resp.Request.Method, path, err)
	}
	return nil
}

// closeBody drains a little of what is left so the connection can be
// reused, then closes the body.
func closeBody(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
}
