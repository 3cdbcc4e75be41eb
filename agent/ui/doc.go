// Package ui is the web UI every agent serves under /ui/: plain HTML, CSS
// and JavaScript modules embedded from static/, with no build step and
// nothing loaded from elsewhere, so it works on an air-gapped LAN.
//
// The Go side only serves files. The pages read the same /v1/ API a user
// can curl, following it with blocking queries (?index=&wait=), and never
// write. Every path under /ui/ that is not an asset answers index.html, so
// deep links such as /ui/topics/Orders load directly and the client-side
// router picks the view.
//
// Safety: what the cluster holds (topics, URLs, tags) is data from the
// network. The pages render it as text only (static/assets/dom.js; no
// innerHTML), and every answer carries a Content-Security-Policy that
// allows scripts, styles and fetches from this agent only, and no inline
// script.
//
// Handler is safe for concurrent use; the files are read and compressed
// once, at the first request.
package ui
