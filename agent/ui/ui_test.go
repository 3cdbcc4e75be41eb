package ui

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// The budget: everything the UI ships, uncompressed.
const maxAssetBytes = 150 << 10

func TestAssetsWithinBudget(t *testing.T) {
	if n := Size(); n > maxAssetBytes {
		t.Fatalf("UI assets are %d bytes, over the %d-byte budget", n, maxAssetBytes)
	}
}

func get(t *testing.T, path string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, req)
	return rec.Result()
}

func TestDeepLinksServeIndex(t *testing.T) {
	index, _ := fs.ReadFile(static, "static/index.html")
	for _, p := range []string{"/ui/", "/ui/members", "/ui/topics/Orders", "/ui/services/com.example.Greeter", "/ui/no/such/view"} {
		res := get(t, p)
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || !bytes.Equal(body, index) || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s, want index.html", p, res.StatusCode, res.Header.Get("Content-Type"))
		}
		if csp := res.Header.Get("Content-Security-Policy"); csp != CSP {
			t.Errorf("%s: CSP %q", p, csp)
		}
	}
	if res := get(t, "/ui/assets/nope.js"); res.StatusCode != 404 {
		t.Errorf("missing asset: %d, want 404", res.StatusCode)
	}
	if res := get(t, "/ui/assets/app.js"); res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("app.js served as %q", res.Header.Get("Content-Type"))
	}
}

func TestGzipOnTheWire(t *testing.T) {
	plain, _ := io.ReadAll(get(t, "/ui/assets/app.css").Body)
	res := get(t, "/ui/assets/app.css", "Accept-Encoding", "br, gzip;q=0.8")
	if res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("headers %v", res.Header)
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	if !bytes.Equal(unzipped, plain) {
		t.Fatal("gzip body differs from the file")
	}
	if res := get(t, "/ui/assets/app.css", "Accept-Encoding", "gzip;q=0"); res.Header.Get("Content-Encoding") != "" {
		t.Error("gzip sent to a client refusing it")
	}
	etag := res.Header.Get("ETag")
	if res := get(t, "/ui/assets/app.css", "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation: %d, want 304", res.StatusCode)
	}
}

func TestReadOnly(t *testing.T) {
	req := httptest.NewRequest("POST", "/ui/", strings.NewReader("x"))
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST /ui/: %d", rec.Code)
	}
}

// TestNoHTMLFromData keeps the rule the pages are built on: no API in
// the assets that parses a string as HTML or code, no inline script or
// handler, nothing loaded from another host.
func TestNoHTMLFromData(t *testing.T) {
	banned := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setInterval|DOMParser|createContextualFragment`)
	external := regexp.MustCompile(`(?i)(src|href)=["']?(https?:)?//|@import`)
	cssURL := regexp.MustCompile(`url\(`)
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(static, p)
		if m := banned.Find(b); m != nil {
			t.Errorf("%s uses %s", p, m)
		}
		if m := external.Find(b); m != nil || strings.HasSuffix(p, ".css") && cssURL.Match(b) {
			t.Errorf("%s loads from elsewhere: %s", p, m)
		}
		if strings.HasSuffix(p, ".html") && regexp.MustCompile(`<script(?:[^>]*)>[^<]|\son[a-z]+=`).Match(b) {
			t.Errorf("%s has inline script or an inline handler", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
