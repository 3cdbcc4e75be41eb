package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/namecast/namecast/internal/atomicfile"
)

// cacheVersion is the format of the cache file; a file of another version
// is ignored rather than misread.
const cacheVersion = 1

// cacheFile keeps the last-known list of every interface and category the
// registry has read, so that Subscribe and Lookup can answer while the
// agent cannot (Dubbo's registry cache file). Dubbo stores one
// subscription's filtered view per service key; namecast stores the
// agent's unfiltered list per interface and category instead, the unit the
// agent serves, so that every service key of an interface (any group,
// version or category mix) is answered from it through dubbo.Match.
//
// The file is JSON:
//
//	{"version":1,"interfaces":{"com.foo.Bar":{"providers":["dubbo://..."],"routers":[]}}}
//
// It is rewritten whole, atomically (a temporary file renamed over it),
// by one goroutine that coalesces bursts of changes. All methods are safe
// on a nil *cacheFile, which is no cache.
type cacheFile struct {
	path  string
	log   *slog.Logger
	dirty chan struct{}

	mu      sync.Mutex
	data    map[string]map[string][]string // interface → category → URLs
	changes uint64                         // grows with every change to data
	saved   uint64                         // changes as of the last write

	writeMu sync.Mutex // one write of the file at a time
}

type cacheJSON struct {
	Version    int                            `json:"version"`
	Interfaces map[string]map[string][]string `json:"interfaces"`
}

// loadCache reads path. A missing file is an empty cache; an unreadable
// one is set aside (path.corrupt) and reported, since the agent will supply
// what it held.
func loadCache(path string, log *slog.Logger) (*cacheFile, error) {
	c := &cacheFile{path: path, log: log, dirty: make(chan struct{}, 1), data: map[string]map[string][]string{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("namecast: reading cache file: %w", err)
	}
	var f cacheJSON
	if err := json.Unmarshal(b, &f); err != nil || f.Version != cacheVersion {
		log.Warn("cache file is unreadable; setting it aside", "path", path, "err", err, "version", f.Version)
		_ = os.Rename(path, path+".corrupt")
		return c, nil
	}
	for iface, cats := range f.Interfaces {
		for cat, urls := range cats {
			c.setLocked(watchKey{iface, cat}, urls)
		}
	}
	c.saved = c.changes // the file already says all this
	return c, nil
}

// get returns the cached list of key, and whether there is one.
func (c *cacheFile) get(key watchKey) ([]string, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	urls, ok := c.data[key.iface][key.category]
	return slices.Clone(urls), ok
}

// interfaces lists the cached interfaces, sorted.
func (c *cacheFile) interfaces() []string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.data))
}

// put records key's list and, if it changed, asks for a write.
func (c *cacheFile) put(key watchKey, urls []string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	old, ok := c.data[key.iface][key.category]
	changed := !ok || !slices.Equal(old, urls)
	if changed {
		c.setLocked(key, urls)
	}
	c.mu.Unlock()
	if changed {
		poke(c.dirty)
	}
}

func (c *cacheFile) setLocked(key watchKey, urls []string) {
	if c.data[key.iface] == nil {
		c.data[key.iface] = map[string][]string{}
	}
	// Never null in the file: [] is "known to be empty".
	c.data[key.iface][key.category] = append([]string{}, urls...)
	c.changes++
}

// run writes the file after changes until ctx is done; Close writes the
// last changes with flush.
func (c *cacheFile) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.dirty:
			if err := c.flush(); err != nil {
				c.log.Error("writing the cache file failed", "path", c.path, "err", err)
			}
		}
	}
}

// flush writes the file if anything changed since the last write.
func (c *cacheFile) flush() error {
	if c == nil {
		return nil
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	if c.changes == c.saved {
		c.mu.Unlock()
		return nil
	}
	b, err := json.Marshal(cacheJSON{Version: cacheVersion, Interfaces: c.data})
	changes := c.changes
	c.mu.Unlock()
	if err != nil {
		return err
	}
	// A reader (or a crash) sees the old file or the new one, never part
	// of one.
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil {
		return fmt.Errorf("namecast: writing cache file: %w", err)
	}
	if err := atomicfile.Write(c.path, b); err != nil {
		return fmt.Errorf("namecast: writing cache file: %w", err)
	}
	c.mu.Lock()
	c.saved = changes
	c.mu.Unlock()
	return nil
}
