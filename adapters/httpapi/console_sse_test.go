package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/internal/browsertest"
)

// The console's event-stream parser, run in the browser on the wire
// format's corner cases: frames cut anywhere between chunks, CRLF and CR
// line ends, comments (heartbeats), several data lines, no space after
// the colon.
func TestConsoleParsesEventStreams(t *testing.T) {
	b := browsertest.New(t)
	srv := httptest.NewServer(httpapi.Console())
	defer srv.Close()
	b.Navigate(srv.URL + "/")
	chunks := []string{
		": heartbeat\n\nid: 7\nevent: tok", "en\ndata: {\"type\":\"token\",\"text\":\"a\"}\n",
		"\nid:8\r\nevent:completed\r\ndata:{\"type\":\"completed\"}\r\n\r\n",
		"data: line1\rdata: line2\r\r", ": heartbeat\n\n", "id: 9\ndata: x\n", // no blank line yet: not a frame
	}
	raw, _ := json.Marshal(chunks)
	got := b.Eval(fmt.Sprintf(`import("/console/sse.js").then((m) => {
		const state = {}, out = [];
		for (const c of %s) m.parseFrames(state, c, (f) => out.push(f));
		return JSON.stringify(out);
	})`, raw))
	type frame struct{ ID, Event, Data string }
	var frames []frame
	if err := json.Unmarshal([]byte(got), &frames); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	want := []frame{
		{"7", "token", `{"type":"token","text":"a"}`},
		{"8", "completed", `{"type":"completed"}`},
		{"", "message", "line1\nline2"},
	}
	if diff := cmp.Diff(want, frames); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
}

// A followed stream that drops is reopened with Last-Event-ID, without
// the first request's ?run= (the id says where to resume), and the page
// says it is reconnecting meanwhile; the token travels in the header
// only.
func TestConsoleReconnectsWithLastEventID(t *testing.T) {
	b := browsertest.New(t)
	var mu sync.Mutex
	var requests []string
	mux := http.NewServeMux()
	mux.Handle("/", httpapi.Console())
	mux.HandleFunc("GET /api/v1/conversations/{key}/events", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := len(requests)
		requests = append(requests, fmt.Sprintf("%s %s last=%q auth=%q", r.PathValue("key"), r.URL.RawQuery, r.Header.Get("Last-Event-ID"), r.Header.Get("Authorization")))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 0 { // two events, then the connection drops
			fmt.Fprint(w, "id: 41\nevent: token\ndata: {\"type\":\"token\",\"run_id\":\"r1\",\"seq\":41,\"text\":\"Hel\"}\n\n")
			fmt.Fprint(w, "id: 42\nevent: token\ndata: {\"type\":\"token\",\"run_id\":\"r1\",\"seq\":42,\"text\":\"lo\"}\n\n")
			return
		}
		fmt.Fprint(w, "id: 43\nevent: completed\ndata: {\"type\":\"completed\",\"run_id\":\"r1\",\"seq\":43,\"text\":\"Hello.\",\"status\":\"done\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // then stays open, as a live follow does
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b.Navigate(srv.URL + "/")
	got := b.Eval(`sessionStorage.setItem("opsgate.token", "og_test"),
		import("/console/sse.js").then((m) => new Promise((resolve) => {
			const events = [], states = [];
			const f = new m.Follow("slack:T1:C1", "?run=r1", (ev) => {
				events.push(ev.seq + ":" + ev.type);
				if (ev.type === "completed") { f.stop(); resolve(JSON.stringify({events, states})); }
			}, (s) => states.push(s));
		}))`)
	var res struct{ Events, States []string }
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if diff := cmp.Diff([]string{"41:token", "42:token", "43:completed"}, res.Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"connecting", "live", "reconnecting", "live"}, res.States); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		`slack:T1:C1 run=r1 last="" auth="Bearer og_test"`,
		`slack:T1:C1  last="42" auth="Bearer og_test"`,
	}
	if diff := cmp.Diff(want, requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}
