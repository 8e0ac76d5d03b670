package sqlite_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// BenchmarkAppendMessages appends what one model turn with two tool calls
// adds to a transcript: the assistant message and two tool results.
func BenchmarkAppendMessages(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "opsgate.db"))
	ctx := b.Context()
	turn := []core.Message{
		{Role: core.RoleAssistant, RunID: "r1", Time: time.Now(), ToolCalls: []core.ToolCall{
			{ID: "call_1", Name: "get_pods", Arguments: []byte(`{"namespace":"payments"}`)},
			{ID: "call_2", Name: "get_events", Arguments: []byte(`{"namespace":"payments","limit":50}`)},
		}},
		{Role: core.RoleTool, ToolCallID: "call_1", Name: "get_pods", RunID: "r1", Time: time.Now(), Content: strings.Repeat("payments-7d9f Running 0 3d\n", 40)},
		{Role: core.RoleTool, ToolCallID: "call_2", Name: "get_events", RunID: "r1", Time: time.Now(), Content: strings.Repeat("Warning BackOff restarting failed container\n", 20)},
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Apply(ctx, core.Batch{ConvKey: "slack:T1:C1:1.2", Messages: turn}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMessages reads a 40-message transcript, the default context window.
func BenchmarkMessages(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "opsgate.db"))
	ctx := b.Context()
	for i := range 40 {
		m := core.Message{Role: core.RoleUser, Content: fmt.Sprintf("message %d: %s", i, strings.Repeat("x", 400)), Time: time.Now()}
		if err := s.Apply(ctx, core.Batch{ConvKey: "c", Messages: []core.Message{m}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Messages(ctx, "c"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveInbound stores new inbound messages, one conversation.
func BenchmarkSaveInbound(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "opsgate.db"))
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		in := core.Inbound{ConvKey: "telegram:bot:42", MessageID: fmt.Sprint(i), User: core.Actor{ID: "U1"}, Text: "status of payments?", Time: time.Now()}
		if _, err := s.SaveInbound(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveInboundParallel stores new inbound messages from many
// goroutines and conversations at once, as a busy `opsgate serve` does.
func BenchmarkSaveInboundParallel(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "opsgate.db"))
	ctx := b.Context()
	b.ReportAllocs()
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			in := core.Inbound{ConvKey: fmt.Sprintf("slack:T1:C%d:1.2", i%16), MessageID: fmt.Sprint(i), Text: "hi", Time: time.Now()}
			if _, err := s.SaveInbound(ctx, in); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkNewMessage is what the engine asks the store between a new
// chat's message and its model request (figure 12's message → model): the
// inbound message stored, then the conversation's checkpoints, record and
// transcript read, each the first read after a write, and the run's start
// committed.
func BenchmarkNewMessage(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "opsgate.db"))
	ctx := b.Context()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		key := fmt.Sprintf("telegram:%d", i)
		in := core.Inbound{ConvKey: key, MessageID: "1", User: core.Actor{ID: "U1"}, Text: "is checkout healthy?", Time: time.Now()}
		if _, err := s.SaveInbound(ctx, in); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Checkpoints(ctx, key); err != nil {
			b.Fatal(err)
		}
		conv, err := s.Conversation(ctx, key)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Messages(ctx, key); err != nil {
			b.Fatal(err)
		}
		run := core.Run{ID: fmt.Sprint("r", i), ConvKey: key, Status: core.RunRunning, StartedAt: time.Now()}
		conv.Title = "is checkout healthy?"
		if err := s.Apply(ctx, core.Batch{ConvKey: key, CreateRun: &run, InboundDone: []core.Inbound{in}, Conversation: &conv,
			Messages: []core.Message{{Role: core.RoleUser, Content: in.Text, RunID: run.ID, Time: time.Now()}}}); err != nil {
			b.Fatal(err)
		}
	}
}
