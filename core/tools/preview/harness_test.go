package preview_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/core/tools/preview"
	"github.com/opsgate/opsgate/internal/kubetest"
)

// The acceptance tests run the whole stack as `opsgate serve` does: the
// Slack fake (Web API + Socket Mode) and the adapter, the real engine with
// the SQLite store, the fake model, and real MCP server processes, with
// previews on (docs/design.md §18).

const (
	chOps = "C0OPS"
	alice = "U0ALICE" // asks
	bob   = "U0BOB"   // a configured approver
)

type stack struct {
	t    *testing.T
	fake *slacktest.Server
	base *enginetest.Stack
	eng  *core.Engine
	a    *slack.Adapter

	cancel   context.CancelFunc
	runDone  chan error
	downOnce sync.Once
}

// newStack starts everything with servers besides the fake "k8s" one, and
// recipes by toolset.
func newStack(t *testing.T, recipes map[string][]preview.Recipe, servers ...tools.ServerConfig) *stack {
	t.Helper()
	s := &stack{t: t, fake: slacktest.New(t), runDone: make(chan error, 1)}
	s.base = enginetest.NewWithTools(t, []tools.Option{tools.WithCallTimeout(time.Minute)}, servers...)
	s.fake.AddUser(alice, "alice")
	s.fake.AddUser(bob, "bob")
	cfg := slack.Config{BotToken: slacktest.BotToken, AppToken: slacktest.AppToken, APIURL: s.fake.APIURL(),
		Channels: []string{chOps}, Approvers: []string{bob}}
	ccfg := enginetest.Config()
	ccfg.Policy = core.DefaultPolicy{Approvers: map[string][]string{"slack": cfg.Approvers}}
	var err error
	if s.a, err = slack.New(cfg, coretest.Logger(t)); err != nil {
		t.Fatal(err)
	}
	deps := s.base.Deps(t, s.a.Sender())
	deps.Previewer = preview.New(s.base.Tools, recipes)
	s.eng = enginetest.Engine(t, ccfg, deps)
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.runDone <- s.a.Run(ctx, s.eng) }()
	s.fake.WaitConnected(t)
	t.Cleanup(s.shutdown)
	return s
}

func (s *stack) shutdown() {
	s.downOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s.cancel()
		if err := <-s.runDone; err != nil {
			s.t.Errorf("Run: %v", err)
		}
		if err := s.eng.Wait(ctx); err != nil {
			s.t.Errorf("engine wait: %v", err)
		}
		if err := s.a.Close(); err != nil {
			s.t.Errorf("adapter close: %v", err)
		}
		if err := s.eng.Shutdown(ctx); err != nil {
			s.t.Errorf("engine shutdown: %v", err)
		}
	})
}

func key(root string) string { return slack.ConvKey(slacktest.TeamID, chOps, root) }

// ask has alice ask in a new thread; the model calls tool with args (a
// JSON object) and, once the call has an answer, says final. It returns
// the thread and the approval card.
func (s *stack) ask(toolset, tool, args, final string) (root string, card slacktest.Message) {
	s.t.Helper()
	root, ev := s.fake.Mention(chOps, alice, "please run "+tool, "")
	s.loadWriteTools(key(root), toolset)
	s.base.LLM.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: tool, Arguments: args}}},
		llmfake.Reply{Text: final},
	)
	s.fake.SendEvent(s.t, ev)
	return root, s.waitCard(root, "")
}

// loadWriteTools lets the conversation use toolset's write tools from its
// first message, as if the model had loaded them.
func (s *stack) loadWriteTools(key, toolset string) {
	s.t.Helper()
	ctx := context.Background()
	c, err := s.base.Store.Conversation(ctx, key)
	if err != nil {
		s.t.Fatal(err)
	}
	c.Toolsets = []core.Toolset{{Name: toolset, Write: true}}
	if err := s.base.Store.Apply(ctx, core.Batch{Conversation: &c}); err != nil {
		s.t.Fatal(err)
	}
}

// waitCard waits for an approval card with buttons in the thread, other
// than the card skip.
func (s *stack) waitCard(root, skip string) slacktest.Message {
	s.t.Helper()
	var card slacktest.Message
	s.fake.Eventually(s.t, "an approval card", func() bool {
		for _, m := range s.fake.BotReplies(chOps, root) {
			if _, ok := m.Button("approve"); ok && m.TS != skip {
				card = m
				return true
			}
		}
		return false
	})
	return card
}

// waitCardText waits until the card's message contains every want, and
// returns it.
func (s *stack) waitCardText(card slacktest.Message, wants ...string) slacktest.Message {
	s.t.Helper()
	var got slacktest.Message
	s.fake.Eventually(s.t, "the card to say "+strings.Join(wants, ", "), func() bool {
		got, _ = s.fake.Message(chOps, card.TS)
		for _, w := range wants {
			if !strings.Contains(got.Plain(), w) {
				return false
			}
		}
		return true
	})
	return got
}

// click has bob click the card's button ("approve" or "deny").
func (s *stack) click(card slacktest.Message, button string) {
	s.t.Helper()
	b, ok := card.Button(button)
	if !ok {
		s.t.Fatalf("the card has no %s button: %q", button, card.Plain())
	}
	s.fake.SendClick(s.t, s.fake.Click(bob, "bob", card, b))
}

// waitFinal waits until the thread's last bot message ends with want.
func (s *stack) waitFinal(root, want string) {
	s.t.Helper()
	s.fake.Eventually(s.t, "the final answer "+want, func() bool {
		ms := s.fake.BotReplies(chOps, root)
		return len(ms) > 0 && strings.HasSuffix(strings.TrimSpace(ms[len(ms)-1].Plain()), want)
	})
}

// audit returns the conversation's audit entries of kind.
func (s *stack) audit(root, kind string) []core.AuditEntry {
	s.t.Helper()
	all, err := s.base.Store.Audit(context.Background(), core.AuditFilter{ConvKey: key(root)})
	if err != nil {
		s.t.Fatal(err)
	}
	var out []core.AuditEntry
	for _, e := range all {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// filesystemServer is @modelcontextprotocol/server-filesystem serving dir,
// from the cache deployments/kube/build.sh fills (internal/kubetest); the
// test is skipped without it (failed under CI=true).
func filesystemServer(t *testing.T, name, dir string) tools.ServerConfig {
	t.Helper()
	argv := append(kubetest.MCPServer(t, kubetest.ServerFilesystem), dir)
	return tools.ServerConfig{Name: name, Command: argv[0], Args: argv[1:]}
}

// hangServer builds and returns testdata/hangserver, an MCP server whose
// read tool never answers.
func hangServer(t *testing.T, name string) tools.ServerConfig {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hangserver")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/hangserver").CombinedOutput()
	if err != nil {
		t.Fatalf("go build testdata/hangserver: %v\n%s", err, out)
	}
	return tools.ServerConfig{Name: name, Command: bin}
}

// TestMain stops the control plane the Kubernetes drills share.
func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
