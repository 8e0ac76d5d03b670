package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/opsgate/opsgate/adapters/httpapi"
)

// The console's page and files load without a token, under a CSP that
// allows only the page's own files; other paths are 404 and other methods
// 405, so the console never answers for a path it does not own.
func TestConsoleServesFiles(t *testing.T) {
	srv := httptest.NewServer(httpapi.Console())
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		status       int
		ctype, body  string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", `<script type="module" src="/console/app.js">`},
		{"HEAD", "/", 200, "text/html; charset=utf-8", ""},
		{"GET", "/console/app.js", 200, "text/javascript; charset=utf-8", "import"},
		{"GET", "/console/app.css", 200, "text/css; charset=utf-8", "--bg"},
		{"GET", "/console/sse.js", 200, "text/javascript; charset=utf-8", "Last-Event-ID"},
		{"GET", "/console/", 404, "", ""},
		{"GET", "/console/index.html", 404, "", ""},
		{"GET", "/console/../console.go", 404, "", ""},
		{"GET", "/console/nope.js", 404, "", ""},
		{"GET", "/index.html", 404, "", ""},
		{"GET", "/favicon.ico", 404, "", ""},
		{"POST", "/", 405, "", ""},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d %s, want %d", resp.StatusCode, body, tc.status)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", got)
			}
			if tc.status != 200 {
				if strings.Contains(string(body), "<") {
					t.Errorf("error body is markup: %s", body)
				}
				return
			}
			want := map[string]string{
				"Content-Type":            tc.ctype,
				"Content-Security-Policy": "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
				"Referrer-Policy":         "no-referrer",
				"Cache-Control":           "no-cache",
			}
			for k, v := range want {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if !strings.Contains(string(body), tc.body) {
				t.Errorf("body does not contain %q", tc.body)
			}
		})
	}
}

// The page obeys its own CSP: no inline script, no inline style, no
// handler attribute, nothing from another origin.
func TestConsoleHasNothingInline(t *testing.T) {
	rec := httptest.NewRecorder()
	httpapi.Console().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	page := rec.Body.String()
	for _, bad := range []string{"<script>", "style=", "<style", " onclick=", " onload=", "http://", "https://", "javascript:"} {
		if strings.Contains(page, bad) {
			t.Errorf("index.html contains %q", bad)
		}
	}
}
