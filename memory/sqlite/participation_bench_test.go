package sqlite_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
)

// BenchmarkParticipated is the visibility query a non-admin API request
// makes once (docs/design.md §17), over a store of 2,000 conversations with 20,000
// messages from 50 people and 4,000 approvals (each with 3 eligible
// people and a vote); the person asked about took part in about 1 in 50.
//
//	go test ./memory/sqlite -run '^$' -bench Participated
func BenchmarkParticipated(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "opsgate.db"))
	ctx := b.Context()
	now := time.Now().UTC()
	const convs, msgs, approvals, people = 2000, 20000, 4000, 50
	for i := range msgs {
		in := core.Inbound{ConvKey: fmt.Sprintf("slack:T0:C%d", i%convs), MessageID: fmt.Sprint(i),
			User: core.Actor{ID: fmt.Sprintf("slack:U%d", i%people)}, Text: "hello", Time: now}
		if _, err := s.SaveInbound(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	var batch []core.Approval
	for i := range approvals {
		batch = append(batch, core.Approval{ID: fmt.Sprintf("a%d", i), RunID: "r", ConvKey: fmt.Sprintf("slack:T0:C%d", i%convs),
			CallID: fmt.Sprint(i), Toolset: "k8s", Tool: "scale", Arguments: []byte(`{}`), ActionHash: strings.Repeat("ab", 32),
			Risk: core.RiskWrite, Status: core.ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
			Verdict: core.Verdict{Action: core.ActionAsk, Quorum: 2,
				Eligible: []string{fmt.Sprint("p", i%people), fmt.Sprint("p", (i+1)%people), fmt.Sprint("p", (i+2)%people)}}})
		if len(batch) == 500 {
			if err := s.Apply(ctx, core.Batch{Approvals: batch}); err != nil {
				b.Fatal(err)
			}
			batch = nil
		}
	}
	for i := range approvals {
		v := core.Vote{Person: fmt.Sprint("p", i%people), Actor: core.Actor{ID: fmt.Sprintf("slack:U%d", i%people)}, Approve: true, At: now}
		if _, err := s.AddVote(ctx, fmt.Sprintf("a%d", i), v); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var n int
	for b.Loop() {
		keys, err := s.Participated(ctx, []string{"slack:U7", "api:p7"}, "p7")
		if err != nil {
			b.Fatal(err)
		}
		n = len(keys)
	}
	b.ReportMetric(float64(n), "keys")
}
