package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/internal/tokens"
	"github.com/opsgate/opsgate/memory/docs"
)

// acceptanceQuestion is one question of testdata/acceptance.yaml: the
// runbook of runbooks30 it expects first.
type acceptanceQuestion struct {
	Q        string `yaml:"q"`
	Expected string `yaml:"expected"`
	Kind     string `yaml:"kind"`
}

func acceptanceQuestions(t *testing.T, kind string) []acceptanceQuestion {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "acceptance.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var all, out []acceptanceQuestion
	if err := yaml.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	for _, q := range all {
		if q.Kind == kind {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s questions in acceptance.yaml", kind)
	}
	return out
}

// retrieveRunbooks30 imports the thirty runbooks and retrieves each
// question of kind as a turn would (default budget and max docs), checking
// what every turn must hold; check sees each result.
func retrieveRunbooks30(t *testing.T, kind string, check func(t *testing.T, q acceptanceQuestion, mc core.MemoryContext)) {
	eachStore(t, func(t *testing.T, s docs.Store) {
		m := newMemory(t, s)
		importDir(t, m, filepath.Join("testdata", "corpus", "runbooks30"))
		for i, q := range acceptanceQuestions(t, kind) {
			mc, err := m.Retrieve(t.Context(), core.MemoryQuery{ConvKey: "slack:T1:C1:1.1", Person: "alice", RunID: "r" + string(rune('a'+i)),
				Text: q.Q, TokenBudget: DefaultTokenBudget, MaxDocs: DefaultMaxDocs})
			if err != nil {
				t.Fatal(err)
			}
			if n := tokens.Count(mc.Text); n > DefaultTokenBudget {
				t.Errorf("%q: %d tokens injected, budget %d", q.Q, n, DefaultTokenBudget)
			}
			if len(mc.Refs) > DefaultMaxDocs {
				t.Errorf("%q: %d documents injected, max %d", q.Q, len(mc.Refs), DefaultMaxDocs)
			}
			if len(mc.Refs) > 0 && !strings.Contains(mc.Text, "[1] "+mc.Refs[0].Path+" ") {
				t.Errorf("%q: the first ref %s is not the first document of the text", q.Q, mc.Refs[0].Path)
			}
			check(t, q, mc)
		}
	})
}

// acceptance 1: a question naming a service, its namespace and a symptom
// gets that service's runbook as the first injected document, within the
// budget, although other runbooks share the symptom.
func TestRetrieveRunbookForServiceNamespaceSymptom(t *testing.T) {
	retrieveRunbooks30(t, "targeted", func(t *testing.T, q acceptanceQuestion, mc core.MemoryContext) {
		if len(mc.Refs) == 0 || mc.Refs[0].Path != q.Expected {
			t.Errorf("%q: injected %v, want %s first", q.Q, refPaths(mc.Refs), q.Expected)
		}
		if len(mc.Refs) > 0 && !mc.Refs[0].Trusted {
			t.Errorf("%q: %s not trusted", q.Q, q.Expected)
		}
		if !strings.HasPrefix(mc.Text, "<memory_context>\n") {
			t.Errorf("%q: text does not start with <memory_context>", q.Q)
		}
	})
}

// acceptance 2: a question of 40 words and more, most of them in no
// document, still retrieves its runbook (first, as it happens).
func TestRetrieveLongNaturalQuestion(t *testing.T) {
	retrieveRunbooks30(t, "long", func(t *testing.T, q acceptanceQuestion, mc core.MemoryContext) {
		if n := len(strings.Fields(q.Q)); n < 40 {
			t.Errorf("%q: %d words, want a question of 40 or more", q.Q, n)
		}
		if len(mc.Refs) == 0 || mc.Refs[0].Path != q.Expected {
			t.Errorf("%q: injected %v, want %s first", q.Q, refPaths(mc.Refs), q.Expected)
		}
	})
}
