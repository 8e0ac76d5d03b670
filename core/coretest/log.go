package coretest

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Logger returns a logger that writes to t.Log until t's cleanup runs and
// drops what comes after: background goroutines (an engine shutting down, a
// server's reader) may still log once the test is over, and t.Log would
// then panic. Register it before what it logs for, so its cleanup runs last.
func Logger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
