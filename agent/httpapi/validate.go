package httpapi

import (
	"fmt"
	"net"
	"strconv"
)

const (
	maxNameLen         = 127 // RocketMQ's topic name limit, applied to every name
	maxQueueNums       = 65535
	maxTopicsPerBroker = 100000
)

// nameChar is RocketMQ's topic character class plus '.', which broker and
// cluster names commonly use. '/' is excluded: names are key components.
func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '%' || c == '|' || c == '.'
}

func checkName(field, s string) error {
	if len(s) == 0 || len(s) > maxNameLen {
		return fmt.Errorf("%s must be 1-%d characters of [A-Za-z0-9_.%%|-], got %d characters", field, maxNameLen, len(s))
	}
	for i := 0; i < len(s); i++ {
		if !nameChar(s[i]) {
			return fmt.Errorf("%s %q: character %q is not allowed; use [A-Za-z0-9_.%%|-]", field, s, s[i])
		}
	}
	return nil
}

// checkTopic applies RocketMQ's topic rule: 1-127 of [A-Za-z0-9_-%|].
func checkTopic(s string) error {
	if len(s) == 0 || len(s) > maxNameLen {
		return fmt.Errorf("topic name must be 1-%d characters of [A-Za-z0-9_-%%|], got %d characters", maxNameLen, len(s))
	}
	for i := 0; i < len(s); i++ {
		if !nameChar(s[i]) || s[i] == '.' {
			return fmt.Errorf("topic name %q: character %q is not allowed; topic names are 1-%d characters of [A-Za-z0-9_-%%|]", s, s[i], maxNameLen)
		}
	}
	return nil
}

func checkAddr(field, s string, required bool) error {
	if s == "" {
		if required {
			return fmt.Errorf("%s is required: the broker's host:port", field)
		}
		return nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return fmt.Errorf("%s %q must be host:port", field, s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%s %q: port must be from 1 to 65535", field, s)
	}
	return nil
}
