package bench

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// LeanHTTPQuery makes Queries that GET path from addr over one keep-alive
// connection each, writing a prepared request and parsing the answer with
// net/http's own parser. The load generator shares the machine's cores with
// the agent it measures, so it should spend as little of them as it can:
// net/http's Client costs about as much CPU per request as the server does
// (pool, transport goroutines, header maps) and would halve what the agent
// gets. Every answer is still fully read and checked for 200.
func LeanHTTPQuery(addr, path string) QueryMaker {
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: namecast-bench\r\n\r\n")
	return func() (Query, func(), error) {
		var conn net.Conn
		var br *bufio.Reader
		dial := func() error {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				return err
			}
			conn, br = c, bufio.NewReaderSize(c, 16<<10)
			return nil
		}
		if err := dial(); err != nil {
			return nil, nil, err
		}
		q := func() error {
			if conn == nil {
				if err := dial(); err != nil {
					return err
				}
			}
			err := roundTrip(conn, br, req)
			if err != nil {
				conn.Close()
				conn = nil
			}
			return err
		}
		return q, func() {
			if conn != nil {
				conn.Close()
			}
		}, nil
	}
}

func roundTrip(conn net.Conn, br *bufio.Reader, req []byte) error {
	if _, err := conn.Write(req); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	if resp.Close {
		return fmt.Errorf("server closed the keep-alive connection")
	}
	return nil
}

// StdHTTPQuery makes Queries with a net/http Client per worker (keep-alive,
// one connection each): what a Go application calling the agent would see.
func StdHTTPQuery(addr, path string) QueryMaker {
	url := "http://" + addr + path
	return func() (Query, func(), error) {
		tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
		client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		q := func() error {
			resp, err := client.Get(url)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
			return err
		}
		return q, tr.CloseIdleConnections, nil
	}
}
