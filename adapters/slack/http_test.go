package slack_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/slack"
	"github.com/opsgate/opsgate/adapters/slack/slacktest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

const (
	jsonType = "application/json"
	formType = "application/x-www-form-urlencoded"
)

// do sends req and returns the status and body.
func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// HTTP mode: a bad signature and a stale timestamp both get 401, and
// nothing runs.
func TestHTTPModeRejectsBadSignatureAndStaleTimestamp(t *testing.T) {
	s := newStack(t, httpMode)
	s.llm.Push(llmfake.Reply{Text: "Only this one."})
	target := s.http.URL + slack.PathEvents

	_, forged := s.fake.Mention(chOps, mallory, "delete prod", "")
	_, body := s.fake.EventCallback(forged)
	badSig := slacktest.SignedRequest(t, target, "not-the-secret", body, jsonType, time.Now())
	stale := slacktest.SignedRequest(t, target, secret, body, jsonType, time.Now().Add(-6*time.Minute))
	future := slacktest.SignedRequest(t, target, secret, body, jsonType, time.Now().Add(6*time.Minute))
	unsigned := slacktest.SignedRequest(t, target, secret, body, jsonType, time.Now())
	unsigned.Header.Del("X-Slack-Signature")
	tampered := slacktest.SignedRequest(t, target, secret, body, jsonType, time.Now())
	tampered.Body = io.NopCloser(strings.NewReader(strings.Replace(string(body), "delete prod", "delete test", 1)))
	cmd := slacktest.SignedRequest(t, s.http.URL+slack.PathCommands, "not-the-secret",
		[]byte(s.fake.SlashCommand(chOps, mallory, "mallory", "delete prod").Encode()), formType, time.Now())
	for name, req := range map[string]*http.Request{"bad signature": badSig, "stale timestamp": stale,
		"future timestamp": future, "unsigned": unsigned, "tampered body": tampered, "forged command": cmd} {
		if code, _ := do(t, req); code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, code)
		}
	}

	// A genuine request afterwards goes through: the refusals were not an
	// adapter that does nothing.
	ts, ev := s.fake.Mention(chOps, alice, "what runs in prod?", "")
	_, body = s.fake.EventCallback(ev)
	if code, _ := do(t, slacktest.SignedRequest(t, target, secret, body, jsonType, time.Now())); code != http.StatusOK {
		t.Fatalf("signed event: status %d, want 200", code)
	}
	s.waitFinal(chOps, ts, "Only this one.")
	s.shutdown()
	if n := len(s.llm.Requests()); n != 1 {
		t.Errorf("model got %d requests, want only the signed one", n)
	}
	if n := len(s.fake.Calls("chat.postMessage")); n != 1 {
		t.Errorf("%d messages posted, want the one reply", n)
	}
}

// HTTP mode: an event Slack retries (same event_id, X-Slack-Retry-Num) is
// processed once.
func TestHTTPModeRetriedEventProcessedOnce(t *testing.T) {
	s := newStack(t, httpMode)
	s.llm.Push(llmfake.Reply{Text: "Processed once."})
	ts, ev := s.fake.Mention(chOps, alice, "how many nodes?", "")
	_, body := s.fake.EventCallback(ev)
	// A mention where opsgate is not enabled is refused without the engine:
	// its retries show the adapter's own dedupe.
	_, refused := s.fake.Mention(chOther, alice, "hello?", "")
	_, refusedBody := s.fake.EventCallback(refused)
	for _, b := range [][]byte{body, refusedBody} {
		for i := range 3 {
			req := slacktest.SignedRequest(t, s.http.URL+slack.PathEvents, secret, b, jsonType, time.Now())
			if i > 0 {
				req.Header.Set("X-Slack-Retry-Num", string(rune('0'+i)))
				req.Header.Set("X-Slack-Retry-Reason", "http_timeout")
			}
			if code, _ := do(t, req); code != http.StatusOK {
				t.Fatalf("delivery %d: status %d, want 200", i, code)
			}
		}
	}
	s.waitFinal(chOps, ts, "Processed once.")
	s.shutdown()
	if n := len(s.fake.Ephemerals(alice)); n != 1 {
		t.Errorf("%d refusals for one event delivered three times, want 1", n)
	}
	if n := len(s.llm.Requests()); n != 1 {
		t.Errorf("model got %d requests for one event delivered three times, want 1", n)
	}
	if n := len(s.fake.BotReplies(chOps, ts)); n != 1 {
		t.Errorf("%d replies, want 1", n)
	}
}

func TestHTTPModeURLVerification(t *testing.T) {
	s := newStack(t, httpMode)
	body := []byte(`{"token":"legacy","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	code, got := do(t, slacktest.SignedRequest(t, s.http.URL+slack.PathEvents, secret, body, jsonType, time.Now()))
	if code != http.StatusOK || got != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Errorf("url_verification answered %d %q, want the challenge", code, got)
	}
}

// HTTP mode carries slash commands and button clicks like Socket Mode.
func TestHTTPModeCommandAndApproval(t *testing.T) {
	s := newStack(t, httpMode)
	code, help := do(t, slacktest.SignedRequest(t, s.http.URL+slack.PathCommands, secret,
		[]byte(s.fake.SlashCommand(chOps, alice, "alice", "help").Encode()), formType, time.Now()))
	var reply map[string]string
	if code != http.StatusOK || json.Unmarshal([]byte(help), &reply) != nil || reply["response_type"] != "ephemeral" {
		t.Errorf("help: %d %q, want a private JSON answer", code, help)
	}

	// The conversation starts with read tools only: the model loads the
	// write tools first.
	s.llm.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{call("c0", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`)}},
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{call("c1", "scale_deployment", `{"name":"api","namespace":"prod","replicas":5}`)}},
		llmfake.Reply{Text: "api has 5 replicas."},
	)
	form := s.fake.SlashCommand(chOps, alice, "alice", "scale api to 5")
	code, body := do(t, slacktest.SignedRequest(t, s.http.URL+slack.PathCommands, secret, []byte(form.Encode()), formType, time.Now()))
	if code != http.StatusOK || body != "" {
		t.Errorf("request: %d %q, want an empty 200 (the answer is the thread)", code, body)
	}
	root := s.waitReplies(chOps, "", "the root message", func(ms []slacktest.Message) bool { return len(ms) == 1 })[0]
	card := s.waitCard(chOps, root.TS)
	approve, _ := card.Button("approve")
	code, _ = do(t, slacktest.SignedRequest(t, s.http.URL+slack.PathInteractive, secret,
		slacktest.InteractionForm(s.fake.Click(bob, "bob", card, approve)), formType, time.Now()))
	if code != http.StatusOK {
		t.Fatalf("click: status %d", code)
	}
	s.waitFinal(chOps, root.TS, "api has 5 replicas.")
	s.waitCardOutcome(card, "Approved by @bob")
}
