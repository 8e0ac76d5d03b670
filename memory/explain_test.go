package memory

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/internal/golden"
	"github.com/opsgate/opsgate/memory/docs"
)

// acceptance 10: `memory search --explain` shows every component of every
// result. The golden file is SQLite's; the store's own relevance differs
// on Postgres, where the same documents must come out, the runbook first.
func TestExplainGolden(t *testing.T) {
	eachStore(t, func(t *testing.T, s docs.Store) {
		day := 24 * time.Hour
		put(t, s, docs.Document{Path: "payments/payments-api-502-after-deploy.md", Title: "payments-api 502s right after a deploy",
			Content:  "Abort the canary: kubectl argo rollouts abort payments-api -n payments. 502 at ingress-nginx means the new pods reset connections.",
			Tags:     []string{"502", "deploy"},
			Entities: map[string][]string{"service": {"payments-api"}, "namespace": {"payments"}, "environment": {"prod"}}}, testNow.Add(-3*day))
		put(t, s, docs.Document{Path: "platform/ingress-nginx-502-triage.md", Title: "ingress-nginx 502 triage",
			Content:  "Low-rate 502s across all pods without restarts are keep-alive timeouts: the app's idle timeout must exceed nginx's.",
			Entities: map[string][]string{"service": {"ingress-nginx"}, "namespace": {"ingress-nginx"}, "environment": {"prod"}},
			Trust:    docs.SystemSeeded}, testNow.Add(-45*day))
		put(t, s, docs.Document{Path: "payments/inc-2150.md", Title: "INC-2150: payments-api readiness probe before PSP pool warm-up",
			Content: "The readiness probe hit /health; pods got traffic before the PSP pool was up: 502s for 20 minutes after the deploy.",
			Type:    docs.IncidentLesson, Trust: docs.UserAuthored,
			Entities: map[string][]string{"incident": {"INC-2150"}, "service": {"payments-api"}}}, testNow.Add(-90*day))
		put(t, s, docs.Document{Scope: docs.Scope{Kind: docs.Conversation, Key: "slack:T1:C1:1.1"}, Path: "notes/compaction-r1-1.md",
			Title: "payments-api 502 went away after abort", Content: "payments-api 502 went away after the canary abort.",
			Type: docs.ConversationNote, Trust: docs.AgentDraft, Status: docs.Draft}, testNow.Add(-2*time.Hour))
		m := newMemory(t, s)
		query := "payments-api is throwing 502s in prod right after the deploy, what do we do?"
		rs, err := m.Search(t.Context(), SearchRequest{Text: query, Scopes: Visible("slack:T1:C1:1.1", "alice"), IncludeDrafts: true})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := WriteExplain(&b, query, rs); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(t.Name(), "/postgres") {
			out := b.String()
			if !strings.Contains(out, "\n1. payments/payments-api-502-after-deploy.md ") {
				t.Errorf("the runbook is not first:\n%s", out)
			}
			for _, p := range []string{"payments/inc-2150.md", "platform/ingress-nginx-502-triage.md", "notes/compaction-r1-1.md"} {
				if !strings.Contains(out, ". "+p+" ") {
					t.Errorf("%s not explained:\n%s", p, out)
				}
			}
			return
		}
		golden.Check(t, filepath.Join("testdata", "explain.golden"), b.Bytes())
	})
}

func TestExplainNoResults(t *testing.T) {
	var b bytes.Buffer
	if err := WriteExplain(&b, "hey", nil); err != nil {
		t.Fatal(err)
	}
	want := "query:   hey\nterms:   \nintents: general\n" +
		"weights: text 0.50 (store 0.50, title 0.50), type 0.20, trust 0.15, entity 0.10, recency 0.05 (half-life 30 days)\n" +
		"\nno documents matched\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
