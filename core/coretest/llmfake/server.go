package llmfake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Server is a fake OpenAI-compatible endpoint. Its methods are safe for
// concurrent use; concurrent chat requests take replies in arrival order.
type Server struct {
	// URL is the base URL clients use, ending in /v1.
	URL string

	srv  *httptest.Server
	done chan struct{} // closed by Close: ends held and delayed streams

	mu        sync.Mutex
	queue     []Reply
	responder func(Request) Reply
	requests  []Request
	changed   chan struct{} // closed and replaced when a request is recorded
	closeOnce sync.Once
}

// New starts a server on 127.0.0.1 that is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := NewServer()
	t.Cleanup(s.Close)
	return s
}

// NewServer starts a server on 127.0.0.1; the caller must Close it.
func NewServer() *Server {
	s := &Server{done: make(chan struct{}), changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "", fmt.Sprintf("llmfake: no route for %s %s", r.Method, r.URL.Path))
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close ends every stream in progress (held ones included) and shuts the
// server down. It may be called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Push queues replies; each chat request consumes the oldest one.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetResponder makes f answer every chat request instead of the queue; nil
// goes back to the queue. f is called from the request's goroutine.
func (s *Server) SetResponder(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = f
}

// Requests returns every chat request received so far, in arrival order,
// including those answered with an error.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// WaitRequests waits until at least n chat requests have arrived or timeout
// passes, and returns the requests received by then (check the length).
func (s *Server) WaitRequests(n int, timeout time.Duration) []Request {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got, changed := len(s.requests), s.changed
		s.mu.Unlock()
		if got >= n {
			return s.Requests()
		}
		select {
		case <-changed:
		case <-deadline.C:
			return s.Requests()
		}
	}
}

// record stores req and picks its reply. ok is false when nothing was
// scripted; n is the request's 1-based number.
func (s *Server) record(req Request, consume bool) (reply Reply, n int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	n = len(s.requests)
	close(s.changed)
	s.changed = make(chan struct{})
	if !consume {
		return Reply{}, n, false
	}
	switch {
	case s.responder != nil:
		f := s.responder
		// The responder may call back into the server (Push, Requests).
		s.mu.Unlock()
		reply = f(req)
		s.mu.Lock()
		return reply, n, true
	case len(s.queue) > 0:
		reply = s.queue[0]
		s.queue = s.queue[1:]
		return reply, n, true
	}
	return Reply{}, n, false
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	received := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "llmfake: read body: "+err.Error())
		return
	}
	req, decErr := decodeRequest(body, r.Header.Clone())
	req.Received = received
	reply, n, ok := s.record(req, decErr == nil)
	if decErr != nil {
		writeError(w, http.StatusBadRequest, "", decErr.Error())
		return
	}
	if !ok {
		writeError(w, http.StatusInternalServerError, "", fmt.Sprintf("llmfake: no scripted reply for request %d", n))
		return
	}
	switch {
	case reply.NeverAnswer:
		waitGone(r.Context(), s.done)
		return
	case reply.HTML != "":
		writeHTML(w, cmp.Or(reply.Status, http.StatusOK), reply.HTML)
		return
	case reply.Status != 0:
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		writeError(w, reply.Status, reply.ErrorCode, reply.ErrorMessage)
		return
	}
	id := fmt.Sprintf("chatcmpl-llmfake-%d", n)
	if !req.Stream || reply.IgnoreStream {
		complete(w, req, reply, id)
		return
	}
	st := &stream{w: w, req: req, reply: reply, id: id, created: time.Now().Unix(), done: s.done, ctx: r.Context()}
	st.run()
}

// complete answers a non-streaming request with one chat.completion object.
func complete(w http.ResponseWriter, req Request, reply Reply, id string) {
	if reply.MidStreamError != "" {
		writeError(w, http.StatusInternalServerError, "", reply.MidStreamError)
		return
	}
	if reply.Garbage {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, garbage)
		return
	}
	msg := map[string]any{"role": "assistant", "content": reply.Text}
	if reply.Thinking != "" {
		field := "reasoning_content"
		if reply.ThinkingField == "reasoning" {
			field = "reasoning"
		}
		msg[field] = reply.Thinking
	}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
		var calls []map[string]any
		for _, tc := range reply.ToolCalls {
			c := map[string]any{"type": "function", "function": map[string]string{"name": tc.Name, "arguments": tc.Arguments}}
			if tc.ID != "" {
				c["id"] = tc.ID
			}
			calls = append(calls, c)
		}
		msg["tool_calls"] = calls
	}
	u := usageFor(req, reply, len(splitWords(reply.Text))+len(splitWords(reply.Thinking)))
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"system_fingerprint": fingerprint,
		"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage":              u,
	})
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   []any{map[string]any{"id": "llmfake", "object": "model", "created": 1700000000, "owned_by": "llmfake"}},
	})
}

// errorTypes are the error types OpenAI reports per status.
var errorTypes = map[int]string{
	http.StatusBadRequest:      "invalid_request_error",
	http.StatusUnauthorized:    "invalid_request_error",
	http.StatusForbidden:       "invalid_request_error",
	http.StatusNotFound:        "invalid_request_error",
	http.StatusTooManyRequests: "requests",
}

// writeError answers status with an OpenAI-style error body.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	typ, ok := errorTypes[status]
	if !ok {
		typ = "server_error"
	}
	var c any
	if code != "" {
		c = code
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}})
}

func writeHTML(w http.ResponseWriter, status int, page string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, page)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmfake: encode response: %v", err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
