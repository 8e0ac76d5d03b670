package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/policy/redact"
)

// BenchmarkEncodeFrame is what the API spends on one event before it is
// queued for every stream (live) or written to one (replay): a token of a
// streamed answer and the result of a tool call, as the engine hands them
// over (already made safe to show). "again" is what it spent while every
// frame was redacted a second time (redactJSON over the event).
func BenchmarkEncodeFrame(b *testing.B) {
	red, err := redact.New(redact.Options{Secrets: []string{"sk-live-0123456789abcdef"}})
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	result := strings.Repeat("payments-api-7d9 Running 3 restarts 2h\n", 40)
	for _, c := range []struct {
		name string
		ev   core.Event
	}{
		{"token", core.Event{Type: core.EventToken, ConvKey: "api:incident-42", RunID: "r1", Seq: 41, Time: at, Text: " restarted"}},
		{"tool.result", core.Event{Type: core.EventToolResult, ConvKey: "api:incident-42", RunID: "r1", Seq: 42, Time: at,
			Call:     &core.CallInfo{ID: "c1", Name: "k8s_get_pods", Arguments: json.RawMessage(`{"namespace":"payments","selector":"app=payments-api"}`), Result: result},
			Duration: 120 * time.Millisecond}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := encodeFrame(c.ev); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/again", func(b *testing.B) {
			for b.Loop() {
				if _, err := redactJSON(c.ev, red.String); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
