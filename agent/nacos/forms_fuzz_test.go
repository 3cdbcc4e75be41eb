package nacos

import (
	"strings"
	"testing"
)

// The 1.x listener's field and instance metadata are bytes from the
// network: decoding them never panics, and what they decode to is what
// the door can hold (configs it can name, metadata within its bound).
func FuzzParseListening(f *testing.F) {
	for _, seed := range []string{"a\x02g\x02m\x01", "a\x02g\x02m\x02t\x01b\x02g\x02\x01", "", "\x01\x01", "a\x02\x02\x02\x02\x01", "a/b\x02g\x02m\x01"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := parseListening(s)
		if err != nil {
			return
		}
		if len(ls) > maxListenedConfigs {
			t.Fatalf("%d configs past the bound", len(ls))
		}
		for _, l := range ls {
			if _, err := newConfigID(l.tenant, l.group, l.dataID); err != nil {
				t.Fatalf("decoded a config the door cannot name: %+v: %v", l, err)
			}
			_ = listenAnswer([]listened{l})
		}
	})
}

func FuzzParseMetadata(f *testing.F) {
	for _, seed := range []string{`{"a":1,"b":true,"c":"x","d":null}`, "k=v,k2=v2", "a=b=c", `{"a":{}}`, "", `[1]`, `{"a":1e400}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		md, err := parseMetadata(s)
		if err != nil {
			if !strings.Contains(err.Error(), "metadata") {
				t.Fatalf("refusal that does not name metadata: %v", err)
			}
			return
		}
		if len(s) > MaxMetadata {
			t.Fatalf("took %d bytes of metadata, limit %d", len(s), MaxMetadata)
		}
		_ = md
	})
}
