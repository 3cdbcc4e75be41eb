package netns

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// ipTimeout bounds every ip(8) call so a wedged netlink request fails the test
// instead of hanging it until the global -timeout, which skips all cleanup.
const ipTimeout = 30 * time.Second

// ip runs ip(8) and returns its output. Errors carry ip's own message because
// that is the only useful diagnosis ("Operation not permitted", "File exists").
func ip(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ipTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// netnsNames lists the namespaces `ip netns add` has created on this machine.
func netnsNames() ([]string, error) {
	out, err := ip("netns", "list")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		// Lines look like "name (id: 3)" once the namespace has a peer id.
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names, nil
}

// netnsPids lists the processes living in namespace ns.
func netnsPids(ns string) ([]int, error) {
	out, err := ip("netns", "pids", ns)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(out) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
