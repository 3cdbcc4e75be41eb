package multicast

import (
	"strings"
	"testing"
)

// --multicast takes an IPv4 multicast group and a port, or off; anything
// else is refused naming the flag and Dubbo's default.
func TestSettingsValidate(t *testing.T) {
	for _, c := range []struct{ addr, err string }{
		{"off", ""},
		{"224.5.6.7:1234", ""},
		{"239.255.255.250:0", ""},
		{"127.0.0.1:1234", `--multicast "127.0.0.1:1234": "127.0.0.1" is not an IPv4 multicast group`},
		{"ff02::1:1234", `--multicast "ff02::1:1234": want HOST:PORT`},
		{"224.5.6.7", `--multicast "224.5.6.7": want HOST:PORT`},
		{"224.5.6.7:70000", `port "70000"`},
	} {
		s := &MulticastSettings{}
		spec := s.Door()
		spec.Defaults()
		s.MulticastAddr = c.addr
		err := spec.Validate()
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.addr, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), DubboAddr)):
			t.Errorf("%s: %v, want %q and Dubbo's default", c.addr, err, c.err)
		}
	}
	s := &MulticastSettings{MulticastAddr: DubboAddr}
	if err := s.Door().Validate(); err != nil || s.MulticastProbe == 0 || s.MulticastMaxPerSender != DefaultMaxPerSender {
		t.Fatalf("defaults not written in: %+v, %v", s, err)
	}
}
