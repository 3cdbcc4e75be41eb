package gossip

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

type slogLogger struct{ *slog.Logger }

// writer adapts memberlist's "[LEVEL] memberlist: msg" lines to slog, so
// its output lands in the agent's structured log at the right level.
func (l *slogLogger) writer() io.Writer { return logWriter{l.Logger.With("component", "memberlist")} }

type logWriter struct{ l *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	line := bytes.TrimSpace(p)
	level := slog.LevelInfo
	for prefix, lv := range map[string]slog.Level{"[DEBUG]": slog.LevelDebug, "[INFO]": slog.LevelInfo, "[WARN]": slog.LevelWarn, "[ERR]": slog.LevelError} {
		if bytes.HasPrefix(line, []byte(prefix)) {
			level, line = lv, bytes.TrimSpace(line[len(prefix):])
			break
		}
	}
	line = bytes.TrimPrefix(line, []byte("memberlist: "))
	w.l.Log(context.Background(), level, readableBytes(string(line)))
	return len(p), nil
}

// byteSlice is a []byte as fmt's %v prints it: "[123 34 104 ...]".
var byteSlice = regexp.MustCompile(`\[(?:\d{1,3} ){2,}\d{1,3}\]`)

// readableBytes rewrites the byte slices memberlist prints with %v (a
// member's meta in "Refuting an alive message ... meta:([123 34 ...])")
// as something a reader can use: quoted text when the bytes are printable
// (our meta is JSON), hex when short (a version vector), else their size.
func readableBytes(line string) string {
	if !strings.Contains(line, "[") {
		return line
	}
	return byteSlice.ReplaceAllStringFunc(line, func(m string) string {
		fields := strings.Fields(m[1 : len(m)-1])
		b := make([]byte, 0, len(fields))
		for _, f := range fields {
			n, err := strconv.Atoi(f)
			if err != nil || n > 255 {
				return m
			}
			b = append(b, byte(n))
		}
		if utf8.Valid(b) && printable(b) {
			return strconv.Quote(string(b))
		}
		if len(b) <= 16 {
			return "0x" + hex.EncodeToString(b)
		}
		return fmt.Sprintf("<%d bytes>", len(b))
	})
}

func printable(b []byte) bool {
	for _, c := range string(b) {
		if c < ' ' || c == 0x7f {
			return false
		}
	}
	return true
}
