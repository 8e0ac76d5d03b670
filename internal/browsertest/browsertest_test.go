package browsertest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The page's errors are caught: an uncaught exception, a console.error and
// an inline script the CSP refuses.
func TestBrowserCatchesPageErrors(t *testing.T) {
	b := New(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>t</title><p id="p">hello</p><script>document.title = "inline ran"</script><script src="/app.js"></script>`))
	})
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Write([]byte(`console.error("boom from console"); document.getElementById("p").textContent = "from app.js"; setTimeout(() => { throw new Error("kaboom") }, 0);`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b.Navigate(srv.URL + "/")
	b.WaitText("#p", "from app.js")
	for _, want := range []string{"boom from console", "kaboom", "Content Security Policy"} {
		b.WaitError(want)
	}
	if title := b.Eval(`document.title`); title == "inline ran" {
		t.Errorf("the inline script ran despite the CSP")
	}
	b.TakeErrors() // expected; the cleanup would fail the test on them
}
