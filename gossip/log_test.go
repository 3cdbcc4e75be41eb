package gossip

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// memberlist's log lines reach the agent's log without raw byte slices:
// meta (JSON) as text, a version vector as hex.
func TestMemberlistLogHasNoRawBytes(t *testing.T) {
	var buf bytes.Buffer
	w := (&slogLogger{slog.New(slog.NewTextHandler(&buf, nil))}).writer()
	meta := []byte(`{"http":"127.0.0.1:7947"}`)
	line := "[WARN] memberlist: Refuting an alive message for 'b' (10.0.0.2:7946) meta:(" +
		fmt.Sprint(meta) + " VS " + fmt.Sprint(meta) + "), vsn:([1 5 2 0 0 0] VS [1 5 2 0 0 0])\n"
	w.Write([]byte(line))
	got := buf.String()
	if strings.Contains(got, "[123 34") || strings.Contains(got, "[1 5 2") {
		t.Errorf("raw bytes in the log: %s", got)
	}
	for _, want := range []string{`level=WARN`, `127.0.0.1:7947`, `0x010502000000`, `component=memberlist`} {
		if !strings.Contains(got, want) {
			t.Errorf("log %s lacks %s", got, want)
		}
	}
}
