package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzJSONBody decodes arbitrary request bodies as POST …/messages and
// POST …/approvals/{id}/decision do. A body is accepted only when it is
// one JSON value, an object (or null) whose keys all name fields of the
// request, and then the request holds what the JSON said; anything else
// is answered with an error body of a known code, never half-read.
func FuzzJSONBody(f *testing.F) {
	for _, s := range []string{
		`{"text":"restart web"}`, `{"decision":"approve","reason":"looks fine"}`, `{"Text":"case"}`,
		`{"text":"a"} {"text":"b"}`, `{"text":"a"}}`, `{"text":1}`, `{"txt":"typo"}`, `null`, `[]`, "{\"text\":\"\\ud800\"}\n",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, decision bool) {
		var v any = &messageRequest{}
		if decision {
			v = &decisionRequest{}
		}
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		if !decode(w, r, v) {
			var e errorBody
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || !slices.Contains([]string{"bad_json", "unknown_field", "too_large"}, e.Error.Code) ||
				w.Code != http.StatusBadRequest && w.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("refused with %d %q", w.Code, w.Body)
			}
			return
		}
		if w.Body.Len() > 0 {
			t.Fatalf("accepted, but answered %q", w.Body)
		}
		if !json.Valid(body) {
			t.Fatalf("accepted %q, which is not one JSON value", body)
		}
		trimmed := bytes.TrimSpace(body)
		if string(trimmed) == "null" {
			return
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(body, &fields); err != nil {
			t.Fatalf("accepted %q, which is not an object: %v", body, err)
		}
		// What the request holds is what json.Unmarshal makes of the body.
		want := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if err := json.Unmarshal(body, want); err != nil || !reflect.DeepEqual(want, v) {
			t.Fatalf("accepted %q as %+v, want %+v (%v)", body, v, want, err)
		}
		names := []string{"text"}
		if decision {
			names = []string{"decision", "reason"}
		}
		for k := range fields {
			if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, k) }) {
				t.Fatalf("accepted %q with the unknown key %q", body, k)
			}
		}
	})
}

// FuzzEventCursor reads arbitrary Last-Event-ID headers and ?after=,
// ?run= and ?limit= queries. An id is accepted only as a non-negative
// decimal integer, Last-Event-ID (what a reconnecting browser sends) wins
// over ?after=, a replay is asked exactly when an id or a run is given,
// and a refusal is a 400 "invalid" error body.
func FuzzEventCursor(f *testing.F) {
	f.Add("", "after=41&run=0123456789abcdef")
	f.Add("17", "after=3")
	f.Add("-1", "")
	f.Add("", "after=9223372036854775808")
	f.Add("+5", "limit=10&limit=-1")
	f.Add(" 5", "after=%35&run=")
	f.Fuzz(func(t *testing.T, lastEventID, query string) {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/conversations/api:x/events", nil)
		r.URL.RawQuery = query
		if lastEventID != "" {
			r.Header.Set("Last-Event-ID", lastEventID)
		}
		q := r.URL.Query()
		w := httptest.NewRecorder()
		c, ok := cursorOf(w, r)

		raw := lastEventID
		if raw == "" {
			raw = q.Get("after")
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		valid := raw == "" || err == nil && n >= 0
		if ok != valid {
			t.Fatalf("Last-Event-ID %q, query %q: accepted %v, want %v", lastEventID, query, ok, valid)
		}
		if !ok {
			checkInvalid(t, w)
			return
		}
		if raw != "" && c.after != n || raw == "" && c.after != 0 || c.runID != q.Get("run") ||
			c.replay != (raw != "" || q.Get("run") != "") || c.after < 0 {
			t.Fatalf("Last-Event-ID %q, query %q: cursor %+v", lastEventID, query, c)
		}

		w = httptest.NewRecorder()
		limit, ok := intParam(w, r, "limit", 100)
		s := q.Get("limit")
		m, err := strconv.Atoi(s)
		switch {
		case s == "" && (!ok || limit != 100):
			t.Fatalf("no limit: %d, %v", limit, ok)
		case s != "" && ok != (err == nil && m >= 0):
			t.Fatalf("limit %q: accepted %v", s, ok)
		case s != "" && ok && limit != m:
			t.Fatalf("limit %q read as %d", s, limit)
		case !ok:
			checkInvalid(t, w)
		}
	})
}

func checkInvalid(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != http.StatusBadRequest || e.Error.Code != "invalid" {
		t.Fatalf("refused with %d %q", w.Code, w.Body)
	}
}
