package ui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

//go:embed static
var static embed.FS

// Prefix is where the UI is served.
const Prefix = "/ui/"

// CSP allows this agent's own scripts, styles, images and API, nothing
// inline and nothing from elsewhere.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type file struct {
	body, gz []byte
	ctype    string
	etag     string
}

var (
	loadOnce sync.Once
	files    map[string]*file // by path under static/, e.g. "index.html", "assets/app.js"
)

// load compresses every file once. One gzip writer serves them all: a
// writer at BestCompression allocates ~1 MB, so one per file cost a
// sidecar's start ~14 MB of garbage, whose pages stayed in its RSS.
func load() {
	files = map[string]*file{}
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestCompression)
	_ = fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		zw.Reset(&buf)
		zw.Write(body)
		zw.Close()
		sum := sha256.Sum256(body)
		ctype := mime.TypeByExtension(path.Ext(p))
		if path.Ext(p) == ".js" {
			ctype = "text/javascript; charset=utf-8" // the OS mime table may lack it
		}
		files[strings.TrimPrefix(p, "static/")] = &file{body: body, gz: buf.Bytes(), ctype: ctype,
			etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
}

// Handler serves the UI under Prefix: files under /ui/assets/, and
// index.html for every other path, so the browser's router shows the view
// a deep link names. The files are compressed on the first request, so an
// agent whose UI nobody opens never pays for it.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		loadOnce.Do(load)
		serve(w, r)
	})
}

func serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "the web UI is read-only: use GET", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, Prefix)
	f := files["index.html"]
	if strings.HasPrefix(name, "assets/") {
		if f = files[name]; f == nil {
			http.Error(w, "no such asset: "+name, http.StatusNotFound)
			return
		}
	}
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", "no-cache") // revalidate: a new binary may bring new files
	h.Set("ETag", f.etag)
	h.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && match == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.body
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(body)
	}
}

func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(params, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// Size is the total uncompressed size of the UI's files, in bytes.
func Size() int {
	loadOnce.Do(load)
	n := 0
	for _, f := range files {
		n += len(f.body)
	}
	return n
}
