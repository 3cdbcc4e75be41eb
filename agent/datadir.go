package agent

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/namecast/namecast/internal/atomicfile"
)

// incarnation is the version prefix of every record this agent makes. It
// must grow across restarts under the same name so peers take the new
// records over the old: the start time in ns, and with a data dir never
// less than one more than the last run's (clocks step backwards).
func incarnation(dir string, log *slog.Logger) (uint64, error) {
	now := uint64(time.Now().UnixNano())
	if dir == "" {
		return now, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("data dir: %w", err)
	}
	path := filepath.Join(dir, "incarnation")
	inc := now
	if b, err := os.ReadFile(path); err == nil {
		prev, perr := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if perr != nil {
			aside, _ := atomicfile.SetAside(path)
			log.Warn("incarnation file is corrupt; set it aside", "path", path, "aside", aside, "err", perr)
		} else if prev >= inc {
			inc = prev + 1
		}
	}
	if err := atomicfile.Write(path, []byte(strconv.FormatUint(inc, 10)+"\n")); err != nil {
		return 0, fmt.Errorf("data dir: %w", err)
	}
	return inc, nil
}

// saveIncarnation keeps an incarnation gossip raised above a previous
// run's (whose clock was ahead), so the next start begins above it too.
func saveIncarnation(dir string, log *slog.Logger, inc uint64) {
	if dir == "" {
		return
	}
	path := filepath.Join(dir, "incarnation")
	if err := atomicfile.Write(path, []byte(strconv.FormatUint(inc, 10)+"\n")); err != nil {
		log.Error("saving the raised incarnation to the data dir failed", "path", path, "err", err)
	}
}

// removeTemps deletes the temporary files a write-then-rename left when
// the process died between the two (rules.json.tmp123). The data dir's
// lock is held, so no other agent is writing them.
func removeTemps(dir string) {
	names, _ := filepath.Glob(filepath.Join(dir, "*.tmp*"))
	for _, n := range names {
		_ = os.Remove(n)
	}
}
