package rocketmq

import (
	"fmt"
	"strconv"
	"strings"
)

// maxName bounds names that become route keys and gossip payload.
const maxName = 255

// validName reports whether s can be a key component of the route table:
// non-empty, no '/', no control characters. RocketMQ's own rule for topic
// and broker names ([%|a-zA-Z0-9_-]) is stricter, so real names pass.
func validName(s string) bool {
	if s == "" || len(s) > maxName || strings.Contains(s, "/") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

func checkName(field, s string) error {
	if !validName(s) {
		return fmt.Errorf("%s %q is not usable: it must be 1-%d characters without '/' or control characters", field, s, maxName)
	}
	return nil
}

// checkAddr keeps broker addresses parseable by the Go client, which splits
// brokerAddrs on ',' and strips '"' by hand (§3.7).
func checkAddr(field, s string) error {
	if s == "" || len(s) > maxName || strings.ContainsAny(s, ",\"\\{}") {
		return fmt.Errorf("%s %q is not an ip:port address", field, s)
	}
	return nil
}

func parseBrokerID(s string) (int64, error) {
	// Java stores any long: 0 is the master, DLedger brokers start at -1.
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("brokerId %q must be an integer: 0 (master), a slave id, or -1 (DLedger)", s)
	}
	return id, nil
}
