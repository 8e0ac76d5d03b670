package memory

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/memory/docs"
)

// offTopicLeaks is how many of the labelled set's off-topic questions may
// still get a document at DefaultMinScore: their words meet a document's
// by chance ("cover letter marketing job" meets a runbook that mentions a
// marketing job). Lowering it needs a better measure, not a higher floor:
// the floor sits just below the on-topic question that covers least.
const offTopicLeaks = 4

// Issue 21, acceptance 8: the relevance floor. On the labelled set,
// memory_prepare (Retrieve) with the default memory.min_score still
// injects, for every on-topic question, the first relevant document it
// injects without a floor; off-topic questions get nothing but for at
// most offTopicLeaks of them. The figures are logged:
//
//	go test ./memory -run RelevanceFloor -v
func TestRelevanceFloor(t *testing.T) {
	eachStore(t, func(t *testing.T, s docs.Store) {
		floor := newMemory(t, s)
		open := New(s, Options{Logger: coretest.Logger(t), Now: func() time.Time { return testNow }, MinScore: -1})
		importDir(t, floor, filepath.Join("testdata", "corpus"))
		var onTopic, leaks int
		var recallFloor, recallOpen float64
		for i, q := range readQueries(t, "queries.yaml") {
			mq := core.MemoryQuery{ConvKey: q.Conv, Person: q.Person, Text: q.Text, RunID: fmt.Sprint("eval-", i)}
			got, err := floor.Retrieve(t.Context(), mq)
			if err != nil {
				t.Fatal(err)
			}
			if q.Kind == OffTopic {
				if len(got.Refs) > 0 {
					leaks++
					t.Logf("off-topic %q still gets %s", q.Text, got.Refs[0].Path)
				}
				continue
			}
			onTopic++
			was, err := open.Retrieve(t.Context(), mq)
			if err != nil {
				t.Fatal(err)
			}
			recallFloor += recallAt3(got.Refs, q.Relevant)
			recallOpen += recallAt3(was.Refs, q.Relevant)
			for _, r := range was.Refs {
				if slices.Contains(q.Relevant, r.Path) {
					if !slices.ContainsFunc(got.Refs, func(g core.MemoryRef) bool { return g.Path == r.Path }) {
						t.Errorf("%s %q: the floor drops its first relevant document %s", q.Kind, q.Text, r.Path)
					}
					break
				}
			}
		}
		t.Logf("min_score %.2f: recall@3 of what is injected %.3f (without a floor %.3f) over %d on-topic questions; %d of the off-topic questions still get something",
			DefaultMinScore, recallFloor/float64(onTopic), recallOpen/float64(onTopic), onTopic, leaks)
		if leaks > offTopicLeaks {
			t.Errorf("%d off-topic questions get memory, want at most %d", leaks, offTopicLeaks)
		}
	})
}

func recallAt3(refs []core.MemoryRef, relevant []string) float64 {
	found := 0
	for _, r := range refs[:min(QualityK, len(refs))] {
		if slices.Contains(relevant, r.Path) {
			found++
		}
	}
	return float64(found) / float64(len(relevant))
}

// Issue 21, item 6: "auth fail" got the CrashLoopBackOff and the payments
// rollback runbooks, though neither is about authentication. With the
// floor it gets nothing, and a question they answer still gets them.
func TestOffTopicQuestionGetsNoMemory(t *testing.T) {
	eachStore(t, func(t *testing.T, s docs.Store) {
		m := newMemory(t, s)
		put(t, s, docs.Document{Path: "platform/crashloopbackoff.md", Title: "CrashLoopBackOff triage",
			Content: "# CrashLoopBackOff triage\n\nA pod whose container fails to start restarts with back-off. Read the previous logs: kubectl logs --previous. A failed liveness probe also restarts it.\n"}, time.Time{})
		put(t, s, docs.Document{Path: "payments/rollback.md", Title: "Roll back payments-api",
			Content: "# Roll back payments-api\n\nWhen a deploy fails, helm rollback payments-api to the last good revision and watch the 5xx rate.\n"}, time.Time{})
		for _, tc := range []struct {
			q    string
			want []string
		}{
			{"auth fail", nil},
			{"the weather in Berlin", nil},
			{"payments-api deploy failed, roll back", []string{"payments/rollback.md"}},
			{"pod in CrashLoopBackOff", []string{"platform/crashloopbackoff.md"}},
		} {
			got, err := m.Retrieve(t.Context(), core.MemoryQuery{Text: tc.q})
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, r := range got.Refs {
				paths = append(paths, r.Path)
			}
			if len(tc.want) == 0 && (len(paths) > 0 || got.Text != "") {
				t.Errorf("%q injects %v; want nothing", tc.q, paths)
			}
			if len(tc.want) > 0 && (len(paths) == 0 || paths[0] != tc.want[0]) {
				t.Errorf("%q injects %v; want %v first", tc.q, paths, tc.want)
			}
		}
	})
}
