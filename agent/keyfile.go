package agent

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// readKeyFile reads the gossip key of --encrypt-file: one base64 key, the
// output of `namecast keygen`. The key never has to be on a command line
// (where ps and /proc show it to every user of the host), and a file that
// others could read is refused rather than trusted: no read or write bit
// for others, and group read only for the agent's own group (a Kubernetes
// Secret volume with fsGroup, a systemd credential).
func readKeyFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("--encrypt-file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("--encrypt-file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("--encrypt-file %s: not a regular file", path)
	}
	if err := keyFileMode(fi); err != nil {
		return "", fmt.Errorf("--encrypt-file %s: %v; chmod 600 it (the gossip key lets whoever reads it join and write to the cluster)", path, err)
	}
	b := make([]byte, 4096)
	n, err := f.Read(b)
	if err != nil {
		return "", fmt.Errorf("--encrypt-file %s: %w", path, err)
	}
	key := strings.TrimSpace(string(b[:n]))
	if _, err := decodeKey(key); err != nil {
		return "", fmt.Errorf("--encrypt-file %s: the key is %w", path, err)
	}
	return key, nil
}

// keyFileMode refuses a key file others can read or change.
func keyFileMode(fi os.FileInfo) error {
	perm := fi.Mode().Perm()
	if perm&0o007 != 0 {
		return fmt.Errorf("mode %04o lets every user of the host read or change it", perm)
	}
	if perm&0o020 != 0 {
		return fmt.Errorf("mode %04o lets its group change it", perm)
	}
	if perm&0o040 != 0 {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Gid) != os.Getegid() {
			return fmt.Errorf("mode %04o lets its group, not this agent's own, read it", perm)
		}
	}
	return nil
}
