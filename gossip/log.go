package gossip

import (
	"bytes"
	"context"
	"io"
	"log/slog"
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
	w.l.Log(context.Background(), level, string(line))
	return len(p), nil
}
