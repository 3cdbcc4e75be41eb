package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/namecast/namecast/client"
)

// exit reports err the way a user can act on, and returns the exit code.
func (c *cli) exit(name string, err error) int {
	var (
		status exitStatus
		usage  *usageError
	)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &status):
		return int(status)
	case errors.As(err, &usage):
		fmt.Fprintf(c.stderr, "namecast %s: %s\nRun 'namecast help %s' for usage.\n", name, usage.msg, name)
		return 2
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(c.stderr, "namecast %s: interrupted\n", name)
		return 130
	default:
		fmt.Fprintf(c.stderr, "namecast %s: %s\n", name, c.explain(err))
		return 1
	}
}

// explain turns a client error into a sentence that says what to do.
func (c *cli) explain(err error) string {
	var (
		se *client.StatusError
		ue *url.Error
	)
	switch {
	case errors.As(err, &se):
		switch se.Code {
		case http.StatusForbidden:
			return se.Message + " (set --token or NAMECAST_HTTP_TOKEN)"
		case http.StatusMethodNotAllowed:
			return se.Message + " (is the agent at " + c.addr + " a namecast agent of this version?)"
		}
		return se.Message
	case errors.As(err, &ue):
		return fmt.Sprintf("cannot reach the namecast agent at %s: %s (is `namecast agent` running? set --http or NAMECAST_HTTP_ADDR)",
			c.addr, rootCause(ue))
	}
	return err.Error()
}

// rootCause digs the reason out of a transport error: "connection refused"
// rather than `Get "http://...": dial tcp ...: connect: connection refused`.
func rootCause(err error) string {
	var (
		sys *os.SyscallError
		op  *net.OpError
		ue  *url.Error
	)
	switch {
	case errors.As(err, &sys):
		return sys.Err.Error()
	case errors.As(err, &op):
		return op.Err.Error()
	case errors.As(err, &ue):
		return ue.Err.Error()
	}
	return err.Error()
}

// table writes aligned columns; call flush when done.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, header ...string) *table {
	t := &table{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(anySlice(header)...)
	return t
}

func (t *table) row(cols ...any) {
	s := make([]string, len(cols))
	for i, col := range cols {
		s[i] = fmt.Sprint(col)
	}
	fmt.Fprintln(t.tw, strings.Join(s, "\t"))
}

func (t *table) flush() { _ = t.tw.Flush() }

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// printJSON writes v indented, as scripts and jq read it, with &, < and >
// as themselves: the output is for people and pipes, not for HTML.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printLines writes one item per line, the easiest shape to pipe.
func printLines(w io.Writer, items []string) {
	for _, s := range items {
		fmt.Fprintln(w, s)
	}
}

// ago says how long before now t was, in its largest whole unit ("45s",
// "12m", "5h", "3d"); "-" for a time not known.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := max(now.Sub(t), 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}
