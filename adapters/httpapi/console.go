package httpapi

import (
	"embed"
	"net/http"
	"path"
	"strings"
)

// consoleFiles are the web console's page, scripts and styles, built into
// the binary so that the console works offline and matches the API it
// was released with.
//
//go:embed console
var consoleFiles embed.FS

// consoleCSP allows the page nothing but its own files and its own API:
// no inline script or style (a redaction miss rendered as markup could not
// run), no framing (no click-jacking of the Approve button).
const consoleCSP = "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'"

// consoleTypes are the content types of the console's files by extension
// (not the system's MIME table, which differs between machines).
var consoleTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
}

// Console is the web console (docs/design.md §15): GET / is its page and GET
// /console/<file> its scripts and styles; any other path is 404, any
// other method 405. It needs no token: the page holds no data and asks
// for a token, and the data come from the API, which checks it.
func Console() http.Handler {
	return http.HandlerFunc(serveConsole)
}

func serveConsole(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := ""
	switch {
	case r.URL.Path == "/":
		name = "console/index.html"
	case strings.HasPrefix(r.URL.Path, "/console/"):
		// Only the files themselves: no directory listing, no "..".
		if base := path.Base(r.URL.Path); "/console/"+base == r.URL.Path && base != "index.html" {
			name = "console/" + base
		}
	}
	ctype := consoleTypes[path.Ext(name)]
	body, err := consoleFiles.ReadFile(name)
	if name == "" || ctype == "" || err != nil {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Type", ctype)
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}
