package storetest

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

var alice = core.Actor{ID: "U1", Name: "alice"}

func newRun(id, conv string) core.Run {
	return core.Run{
		ID:        id,
		ConvKey:   conv,
		Requester: alice,
		Status:    core.RunRunning,
		StartedAt: at(0),
	}
}

// getRun calls Run and fails the test on error.
func getRun(t *testing.T, s core.Store, id string) core.Run {
	t.Helper()
	r, err := s.Run(t.Context(), id)
	if err != nil {
		t.Fatalf("Run(%q): %v", id, err)
	}
	return r
}

func testRunCreateGet(t *testing.T, s core.Store) {
	want := newRun("run-1", conv1)
	want.Requester = core.Actor{ID: "U9"} // no display name
	other := newRun("run-2", conv2)
	for _, r := range []core.Run{want, other} {
		if err := s.Apply(t.Context(), core.Batch{CreateRun: ptr(r)}); err != nil {
			t.Fatalf("CreateRun(%q): %v", r.ID, err)
		}
	}
	diff(t, "Run(run-1)", want, getRun(t, s, "run-1"))
	diff(t, "Run(run-2)", other, getRun(t, s, "run-2"))
}

func testRunUpdate(t *testing.T, s core.Store) {
	r := newRun("run-1", conv1)
	if err := s.Apply(t.Context(), core.Batch{CreateRun: ptr(r)}); err != nil {
		t.Fatal(err)
	}
	r.Status = core.RunError
	r.Iterations = 7
	r.TTFT = 412*time.Millisecond + 345*time.Microsecond
	r.Duration = 93*time.Second + 1
	r.Usage = core.Usage{PromptTokens: 120_000, CompletionTokens: 3_456, CachedPromptTokens: 98_304, TotalTokens: 123_456}
	r.Error = "model: fatal (HTTP 400): context length exceeded"
	r.EndedAt = at(93 * time.Second)
	if err := s.Apply(t.Context(), core.Batch{UpdateRun: ptr(r)}); err != nil {
		t.Fatalf("UpdateRun: %v", err)
	}
	diff(t, "Run after UpdateRun", r, getRun(t, s, r.ID))

	// Only the mutable fields change: a run never moves to another
	// conversation, requester or start time.
	moved := r
	moved.ConvKey = conv2
	moved.Requester = core.Actor{ID: "U666", Name: "mallory"}
	moved.StartedAt = at(time.Hour)
	moved.Status = core.RunDone
	moved.Error = ""
	if err := s.Apply(t.Context(), core.Batch{UpdateRun: ptr(moved)}); err != nil {
		t.Fatalf("UpdateRun: %v", err)
	}
	want := r
	want.Status, want.Error = core.RunDone, ""
	diff(t, "Run after UpdateRun of immutable fields", want, getRun(t, s, r.ID))
}

func testRunNotFound(t *testing.T, s core.Store) {
	if _, err := s.Run(t.Context(), "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Run of an unknown id: err = %v, want ErrNotFound", err)
	}
	if err := s.Apply(t.Context(), core.Batch{UpdateRun: ptr(newRun("nope", conv1))}); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("UpdateRun of an unknown id: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Run(t.Context(), "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Run after UpdateRun of an unknown id: err = %v, want ErrNotFound (UpdateRun must not create)", err)
	}
}

func testRunDuplicate(t *testing.T, s core.Store) {
	want := newRun("run-1", conv1)
	if err := s.Apply(t.Context(), core.Batch{CreateRun: ptr(want)}); err != nil {
		t.Fatal(err)
	}
	dup := newRun("run-1", conv2)
	dup.Status = core.RunDone
	if err := s.Apply(t.Context(), core.Batch{CreateRun: ptr(dup)}); err == nil {
		t.Error("CreateRun of an existing id: err = nil, want an error")
	}
	diff(t, "Run after a duplicate CreateRun", want, getRun(t, s, "run-1"))
}

// checkpoint is a paused run with every field of Checkpoint in use.
func checkpoint(runID, conv string, created time.Time) core.Checkpoint {
	return core.Checkpoint{
		RunID:     runID,
		ConvKey:   conv,
		Requester: alice,
		Pending: []core.PendingCall{
			{
				Call: core.ToolCall{ID: "call_2", Name: "scale", Arguments: []byte(`{"replicas": 3, "name":"payments"}`)},
				Tool: core.Tool{
					Name: "scale", Toolset: "k8s", Remote: "resources_scale", Description: "Scale a deployment.",
					InputSchema: []byte(`{"type":"object","properties":{"replicas":{"type":"integer"}}}`),
					Risk:        core.RiskWrite,
				},
				ApprovalID: "a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5",
			},
			{
				Call:   core.ToolCall{ID: "call_3", Name: "delete_pod", Arguments: []byte(`{"name": "payments-7`)},
				Tool:   core.Tool{Name: "delete_pod", Toolset: "k8s", Remote: "pods_delete", Risk: core.RiskDestructive},
				Result: &core.ToolResult{Content: "invalid arguments: unexpected end of JSON input", IsError: true},
			},
		},
		Toolsets:  []core.Toolset{{Name: "k8s", Write: true}, {Name: "argo"}},
		Iteration: 4,
		Seq:       118,
		CreatedAt: created,
	}
}

// getCheckpoint calls Checkpoint and fails the test on error.
func getCheckpoint(t *testing.T, s core.Store, runID string) core.Checkpoint {
	t.Helper()
	cp, err := s.Checkpoint(t.Context(), runID)
	if err != nil {
		t.Fatalf("Checkpoint(%q): %v", runID, err)
	}
	return cp
}

func saveCheckpoint(t *testing.T, s core.Store, cp core.Checkpoint) {
	t.Helper()
	if err := s.Apply(t.Context(), core.Batch{Checkpoint: ptr(cp)}); err != nil {
		t.Fatalf("SaveCheckpoint(%q): %v", cp.RunID, err)
	}
}

func testCheckpointSaveGet(t *testing.T, s core.Store) {
	want := checkpoint("run-1", conv1, at(time.Minute))
	saveCheckpoint(t, s, want)
	diff(t, "Checkpoint", want, getCheckpoint(t, s, "run-1"))
}

func testCheckpointReplace(t *testing.T, s core.Store) {
	saveCheckpoint(t, s, checkpoint("run-1", conv1, at(time.Minute)))
	want := checkpoint("run-1", conv1, at(2*time.Minute))
	want.Pending = want.Pending[1:]
	want.Iteration, want.Seq = 5, 140
	saveCheckpoint(t, s, want)
	diff(t, "Checkpoint after replacing it", want, getCheckpoint(t, s, "run-1"))
	cps, err := s.Checkpoints(t.Context(), conv1)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "Checkpoints after replacing one", []core.Checkpoint{want}, cps)
}

func testCheckpointNotFound(t *testing.T, s core.Store) {
	if _, err := s.Checkpoint(t.Context(), "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Checkpoint of an unknown run: err = %v, want ErrNotFound", err)
	}
	if _, err := s.ClaimCheckpoint(t.Context(), "nope"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("ClaimCheckpoint of an unknown run: err = %v, want ErrNotFound", err)
	}
}

func testClaimCheckpointOnce(t *testing.T, s core.Store) {
	want := checkpoint("run-1", conv1, at(time.Minute))
	saveCheckpoint(t, s, want)
	saveCheckpoint(t, s, checkpoint("run-2", conv1, at(2*time.Minute)))
	got, err := s.ClaimCheckpoint(t.Context(), "run-1")
	if err != nil {
		t.Fatalf("ClaimCheckpoint: %v", err)
	}
	diff(t, "claimed Checkpoint", want, got)
	if _, err := s.ClaimCheckpoint(t.Context(), "run-1"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("second ClaimCheckpoint: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Checkpoint(t.Context(), "run-1"); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("Checkpoint after ClaimCheckpoint: err = %v, want ErrNotFound", err)
	}
	// Claiming one run's checkpoint leaves the others alone.
	getCheckpoint(t, s, "run-2")
}

func testClaimCheckpointConcurrent(t *testing.T, s core.Store) {
	want := checkpoint("run-1", conv1, at(time.Minute))
	saveCheckpoint(t, s, want)
	var wins, errs atomic.Int64
	concurrently(racers, func(int) {
		got, err := s.ClaimCheckpoint(t.Context(), "run-1")
		switch {
		case err == nil:
			wins.Add(1)
			diff(t, "claimed Checkpoint", want, got)
		case !errors.Is(err, core.ErrNotFound):
			errs.Add(1)
			t.Errorf("ClaimCheckpoint: err = %v, want nil or ErrNotFound", err)
		}
	})
	if errs.Load() == 0 && wins.Load() != 1 {
		t.Errorf("%d concurrent ClaimCheckpoint: %d won, want exactly 1", racers, wins.Load())
	}
}

func testCheckpointsOfConversation(t *testing.T, s core.Store) {
	if cps, err := s.Checkpoints(t.Context(), conv1); err != nil || len(cps) != 0 {
		t.Fatalf("Checkpoints of a new conversation = %d, %v; want none, nil", len(cps), err)
	}
	// Saved out of order: oldest first means by CreatedAt.
	newer := checkpoint("run-b", conv1, at(2*time.Minute))
	older := checkpoint("run-a", conv1, at(time.Minute))
	saveCheckpoint(t, s, newer)
	saveCheckpoint(t, s, checkpoint("run-c", conv2, at(0)))
	saveCheckpoint(t, s, older)
	got, err := s.Checkpoints(t.Context(), conv1)
	if err != nil {
		t.Fatalf("Checkpoints: %v", err)
	}
	diff(t, "Checkpoints(conv1)", []core.Checkpoint{older, newer}, got)
}

func testUnfinishedRuns(t *testing.T, s core.Store) {
	ctx := t.Context()
	running, done, paused := newRun("run-a", conv1), newRun("run-b", conv1), newRun("run-c", conv2)
	running.StartedAt, done.StartedAt, paused.StartedAt = at(time.Second), at(0), at(2*time.Second)
	later := newRun("run-d", conv2)
	later.StartedAt = at(3 * time.Second)
	for _, r := range []core.Run{running, done, paused, later} {
		if err := s.Apply(ctx, core.Batch{CreateRun: ptr(r)}); err != nil {
			t.Fatal(err)
		}
	}
	done.Status, paused.Status = core.RunDone, core.RunAwaitingApproval
	for _, r := range []core.Run{done, paused} {
		if err := s.Apply(ctx, core.Batch{UpdateRun: ptr(r)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.UnfinishedRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	diff(t, "unfinished runs, oldest first", []string{"run-a", "run-d"}, ids)
}

func testReserveSeqConcurrent(t *testing.T, s core.Store) {
	ctx := t.Context()
	got := make(chan [2]int64, racers)
	concurrently(racers, func(int) {
		last, err := s.ReserveSeq(ctx, "conv-seq", 10)
		if err != nil {
			t.Errorf("ReserveSeq: %v", err)
			return
		}
		got <- [2]int64{last - 10, last}
	})
	close(got)
	used := map[int64]bool{}
	for r := range got {
		for n := r[0] + 1; n <= r[1]; n++ {
			if used[n] {
				t.Fatalf("sequence number %d reserved twice", n)
			}
			used[n] = true
		}
	}
	if len(used) != racers*10 {
		t.Fatalf("%d numbers reserved, want %d", len(used), racers*10)
	}
	if last, err := s.ReserveSeq(ctx, "other-conv", 1); err != nil || last != 1 {
		t.Fatalf("first ReserveSeq of another conversation = %d, %v; want 1", last, err)
	}
}

// A batch's Seq reserves numbers from the same counter as ReserveSeq, with
// the batch's other writes: a run's first block comes with its start.
func testReserveSeqInBatch(t *testing.T, s core.Store) {
	ctx := t.Context()
	if last, err := s.ReserveSeq(ctx, "conv-batch-seq", 5); err != nil || last != 5 {
		t.Fatalf("ReserveSeq = %d, %v; want 5", last, err)
	}
	seq := &core.SeqBlock{ConvKey: "conv-batch-seq", N: 32}
	run := core.Run{ID: "run-batch-seq", ConvKey: "conv-batch-seq", Status: core.RunRunning, StartedAt: time.Now()}
	if err := s.Apply(ctx, core.Batch{Conversation: &core.Conversation{Key: "conv-batch-seq"}, CreateRun: &run, Seq: seq}); err != nil {
		t.Fatal(err)
	}
	if seq.Last != 37 {
		t.Fatalf("the batch reserved up to %d; want 37 (5 before it, 32 in it)", seq.Last)
	}
	if last, err := s.ReserveSeq(ctx, "conv-batch-seq", 1); err != nil || last != 38 {
		t.Fatalf("ReserveSeq after the batch = %d, %v; want 38", last, err)
	}
	// A batch that fails reserves nothing.
	failed := &core.SeqBlock{ConvKey: "conv-batch-seq", N: 32}
	if err := s.Apply(ctx, core.Batch{CreateRun: &run, Seq: failed}); err == nil {
		t.Fatal("a batch creating an existing run was applied")
	}
	if last, err := s.ReserveSeq(ctx, "conv-batch-seq", 1); err != nil || last != 39 {
		t.Fatalf("ReserveSeq after a failed batch = %d, %v; want 39", last, err)
	}
}
