package metrics_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/opsgate/opsgate/internal/metrics"
)

func TestEndpoints(t *testing.T) {
	cases := []struct {
		method, url string
		classify    func(*http.Request) string
		want        string
	}{
		{"POST", "https://api.telegram.org/bot123:SECRET/sendMessage", metrics.APIMethod, "sendMessage"},
		{"POST", "http://127.0.0.1:8081/custom/prefix/bot123:SECRET/getUpdates", metrics.APIMethod, "getUpdates"},
		{"POST", "https://slack.com/api/chat.postMessage", metrics.APIMethod, "chat.postMessage"},
		{"POST", "https://slack.com/api/chat.update/", metrics.APIMethod, "chat.update"},
		// Nothing that looks like a token or an id becomes a label value.
		{"POST", "https://api.telegram.org/bot123:SECRET", metrics.APIMethod, "other"},
		{"GET", "https://api.telegram.org/file/bot123:SECRET/photos/file_1.jpg", metrics.APIMethod, "other"},
		{"GET", "https://example.com/", metrics.APIMethod, "other"},
		{"GET", "https://example.com/" + strings.Repeat("a", 65), metrics.APIMethod, "other"},
		{"POST", "https://discord.com/api/v9/channels/1300000000000000001/messages", metrics.RESTRoute, "POST channels/:id/messages"},
		{"PATCH", "https://discord.com/api/v9/channels/13/messages/14", metrics.RESTRoute, "PATCH channels/:id/messages/:id"},
		{"POST", "http://127.0.0.1:5/proxy/api/v9/interactions/99/aW50ZXJhY3Rpb246dG9rZW4/callback", metrics.RESTRoute, "POST interactions/:id/:id/callback"},
		{"PATCH", "https://discord.com/api/v9/webhooks/12/tok-EN_x/messages/@original", metrics.RESTRoute, "PATCH webhooks/:id/:id/messages/@original"},
		{"GET", "https://discord.com/api/v9/gateway", metrics.RESTRoute, "GET gateway"},
		{"GET", "https://discord.com/somewhere/else", metrics.RESTRoute, "GET other"},
		{"GET", "https://discord.com/api/v9/" + strings.Repeat("a/", 9), metrics.RESTRoute, "GET other"},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.url, nil)
		if got := c.classify(r); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.method, c.url, got, c.want)
		}
	}
}

// The transport counts answers by status, 429s apart, and calls that got
// no answer as "error".
func TestTransportCounts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/sendMessage") {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	m := metrics.New("test", time.Now())
	c := &http.Client{Transport: m.Transport("telegram", nil, metrics.APIMethod)}
	for _, path := range []string{"/botX/getMe", "/botX/sendMessage", "/botX/sendMessage"} {
		resp, err := c.Post(srv.URL+path, "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	broken := &http.Client{Transport: m.Transport("slack", failing{}, metrics.APIMethod)}
	if _, err := broken.Get("http://127.0.0.1:1/api/auth.test"); err == nil {
		t.Fatal("a failing transport succeeded")
	}
	want := `
# HELP opsgate_platform_api_calls_total Calls to chat platforms' APIs, by platform, endpoint and HTTP status code (error: no answer).
# TYPE opsgate_platform_api_calls_total counter
opsgate_platform_api_calls_total{code="200",endpoint="getMe",platform="telegram"} 1
opsgate_platform_api_calls_total{code="429",endpoint="sendMessage",platform="telegram"} 2
opsgate_platform_api_calls_total{code="error",endpoint="auth.test",platform="slack"} 1
# HELP opsgate_platform_rate_limited_total Calls to chat platforms' APIs answered 429 Too Many Requests, by platform and endpoint.
# TYPE opsgate_platform_rate_limited_total counter
opsgate_platform_rate_limited_total{endpoint="sendMessage",platform="telegram"} 2
`
	scrape := httptest.NewServer(m.Handler(slog.New(slog.DiscardHandler)))
	defer scrape.Close()
	if err := testutil.ScrapeAndCompare(scrape.URL, strings.NewReader(want),
		"opsgate_platform_api_calls_total", "opsgate_platform_rate_limited_total"); err != nil {
		t.Error(err)
	}
	var nilM *metrics.Metrics
	if rt := nilM.Transport("discord", failing{}, metrics.RESTRoute); rt != (failing{}) {
		t.Errorf("a nil *Metrics wrapped the transport: %T", rt)
	}
}

type failing struct{}

func (failing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}
