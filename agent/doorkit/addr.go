package doorkit

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"time"
)

// SplitHostPort splits a HOST:PORT setting, its errors phrased for the
// flag that set it.
func SplitHostPort(addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("want HOST:PORT: %v", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return "", 0, fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return host, p, nil
}

// CheckAddr checks the address a door's --flag sets, which may be "off".
func CheckAddr(flag, addr string) error {
	if !On(addr) {
		return nil
	}
	if _, _, err := SplitHostPort(addr); err != nil {
		return fmt.Errorf("--%s %q: %v (or \"off\")", flag, addr, err)
	}
	return nil
}

// IsLoopback reports whether host (a name or an IP address) is this
// machine's loopback.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Duration is a time.Duration that reads "30s" from JSON (the config
// file) and writes itself so.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"30s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }
