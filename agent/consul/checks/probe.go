package checks

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/namecast/namecast/agent/consul/catalog"
)

// userAgent is what Consul's HTTP checks send.
const userAgent = "Consul Health Check"

// probeLoop probes c at once and then every interval until ctx is done.
func (r *Runner) probeLoop(ctx context.Context, c *check) {
	var client *http.Client
	if c.def.Type() == "http" {
		client = r.httpClient(c.def)
		defer client.CloseIdleConnections()
	}
	t := time.NewTicker(c.def.Interval)
	defer t.Stop()
	for {
		var status, output string
		if client != nil {
			status, output = probeHTTP(ctx, client, c.def)
		} else {
			status, output = r.probeTCP(ctx, c.def)
		}
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		if r.current(c) {
			r.setLocked(c, status, output)
		}
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probeTCP is a TCP check's verdict: a connection within the timeout is
// passing.
func (r *Runner) probeTCP(ctx context.Context, def catalog.CheckDef) (string, string) {
	ctx, cancel := context.WithTimeout(ctx, def.Timeout)
	defer cancel()
	conn, err := r.cfg.DialContext(ctx, "tcp", def.TCP)
	if err != nil {
		return catalog.Critical, err.Error()
	}
	conn.Close()
	return catalog.Passing, fmt.Sprintf("TCP connect %s: Success", def.TCP)
}

func (r *Runner) httpClient(def catalog.CheckDef) *http.Client {
	tr := &http.Transport{
		DialContext:       r.cfg.DialContext,
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: def.TLSSkipVerify},
	}
	return &http.Client{Transport: tr, Timeout: def.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// probeHTTP is an HTTP check's verdict: 2xx passing, 429 warning, else
// critical, with Consul's output "HTTP GET url: 200 OK Output: body".
func probeHTTP(ctx context.Context, client *http.Client, def catalog.CheckDef) (string, string) {
	method := def.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if def.Body != "" {
		body = strings.NewReader(def.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, def.HTTP, body)
	if err != nil {
		return catalog.Critical, err.Error()
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/plain, text/*, */*")
	for k, vs := range def.Header {
		if strings.EqualFold(k, "Host") && len(vs) > 0 {
			req.Host = vs[0]
			continue
		}
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return catalog.Critical, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxOutput))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection end cleanly
	output := fmt.Sprintf("HTTP %s %s: %s Output: %s", method, def.HTTP, resp.Status, b)
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		return catalog.Passing, output
	case resp.StatusCode == http.StatusTooManyRequests:
		return catalog.Warning, output
	}
	return catalog.Critical, output
}
