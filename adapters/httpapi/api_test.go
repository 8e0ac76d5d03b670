package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/adapters/httpapi/apimemory"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/enginetest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/tokens"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/policy"
	"github.com/opsgate/opsgate/policy/redact"
)

// The tests here serve the real handler over httptest, on the real engine
// (openai-go against llmfake, the k8s MCP fixture), the SQLite store and
// a policy parsed from the YAML a user would write.

const conv = "telegram:bot:ops"

// policyFile makes alice an sre (who approve writes) and bob nobody;
// both see the Telegram and API conversations (access_test.go has its own
// policy for visibility).
const policyFile = `
people:
  alice: {api: alice, telegram: "1001"}
  bob: {api: bob}
  carol: {telegram: "1003"}
roles:
  sre: [alice]
defaults:
  approvers: [sre]
visibility:
  - people: [alice, bob]
    conversations: ["telegram:*", "api:*"]
`

var carol = core.Actor{ID: "telegram:1003", Name: "carol"}

type rig struct {
	t     *testing.T
	stack *enginetest.Stack
	eng   *core.Engine
	rec   *coretest.Recorder
	srv   *httptest.Server
	red   *redact.Redactor
	// tokens by person
	tokens map[string]string
}

// newRig builds the rig; each with may change the API's options.
func newRig(t *testing.T, with ...func(*httpapi.Options, *enginetest.Stack)) *rig {
	t.Helper()
	pol, err := policy.Parse("policy.yaml", []byte(policyFile), policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	red, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, stack: enginetest.New(t), rec: coretest.NewRecorder(), red: red, tokens: map[string]string{}}
	cfg := enginetest.Config()
	cfg.Policy = policy.NewHolder(pol)
	d := r.stack.Deps(t, r.rec)
	d.Display = red.Events() // as cmd/opsgate does: what streams show is redacted
	r.eng = enginetest.Engine(t, cfg, d)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r.eng.Shutdown(ctx)
	})
	o := httpapi.Options{
		Store: r.stack.Store, Tokens: r.stack.Store, Engine: r.eng, Redact: red.String, Logger: coretest.Logger(t),
		Visibility: cfg.Policy.(*policy.Holder),
		Schedules: func() []httpapi.Schedule {
			return []httpapi.Schedule{{Name: "morning-health", Cron: "0 9 * * 1-5", Target: "log", Prompt: "Summarise."}}
		},
	}
	for _, w := range with {
		w(&o, r.stack)
	}
	api := httpapi.New(o)
	mux := http.NewServeMux()
	mux.Handle(httpapi.Prefix, api)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	for _, p := range []string{"alice", "bob"} {
		secret, tok, err := httpapi.NewToken(p, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := r.stack.Store.CreateToken(t.Context(), tok); err != nil {
			t.Fatal(err)
		}
		r.tokens[p] = secret
	}
	return r
}

// withMemory gives the API long-term memory with one runbook imported.
func withMemory(t *testing.T) func(*httpapi.Options, *enginetest.Stack) {
	return func(o *httpapi.Options, s *enginetest.Stack) {
		m := memory.New(s.Store, memory.Options{Tokens: tokens.Count})
		dir := t.TempDir()
		doc := "# Payments rollback\n\nRoll back the payments service with helm rollback payments in namespace prod.\n"
		if err := os.WriteFile(filepath.Join(dir, "payments-rollback.md"), []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if rep, err := m.Import(t.Context(), dir, "cli:test"); err != nil || len(rep.Skipped) > 0 {
			t.Fatalf("import: %+v, %v", rep, err)
		}
		o.Memory = apimemory.Searcher(m)
	}
}

// do sends a request as token (none when empty) and returns the status
// and the raw body.
func (r *rig) do(token, method, path string, body io.Reader) (int, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.srv.URL+path, body)
	if err != nil {
		r.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		r.t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	return resp.StatusCode, raw
}

// badRequest is a request that must get status with the error code.
type badRequest struct {
	name, token, method, path, body string
	status                          int
	code                            string
}

// expectErrors sends each request and checks its status and error code.
func (r *rig) expectErrors(t *testing.T, reqs []badRequest) {
	t.Helper()
	for _, tc := range reqs {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			status, raw := r.do(tc.token, tc.method, tc.path, body)
			if status != tc.status {
				t.Fatalf("status = %d %s, want %d", status, raw, tc.status)
			}
			if code, _ := errorCode(t, raw); code != tc.code {
				t.Errorf("code = %q, want %q", code, tc.code)
			}
		})
	}
}

// errorCode is the code of an error body.
func errorCode(t *testing.T, raw []byte) (code, message string) {
	t.Helper()
	var b struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(raw, &b); err != nil || b.Error.Code == "" {
		t.Fatalf("not an error body: %s (%v)", raw, err)
	}
	return b.Error.Code, b.Error.Message
}

func toolCalls(calls ...llmfake.ToolCall) llmfake.Reply { return llmfake.Reply{ToolCalls: calls} }

func call(id, name, args string) llmfake.ToolCall {
	return llmfake.ToolCall{ID: id, Name: name, Arguments: args}
}

// pauseForScale starts a run by carol that asks to scale web and waits
// until it awaits approval; it returns the approval.
func (r *rig) pauseForScale() core.Approval {
	r.t.Helper()
	r.stack.LLM.Push(
		toolCalls(call("load", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`)),
		toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)),
		llmfake.Reply{Text: "Scaled web to 3."},
	)
	if err := r.eng.Handle(r.t.Context(), core.Inbound{ConvKey: conv, MessageID: "m1", User: carol, Text: "scale web to 3", Time: time.Now()}); err != nil {
		r.t.Fatal(err)
	}
	ev := r.rec.Wait(r.t, 20*time.Second, 1, coretest.Of(core.EventToolAwaitingApproval))
	if ev.Approval == nil {
		r.t.Fatalf("awaiting approval without an approval: %+v", ev)
	}
	return *ev.Approval
}

// auditCount is how many audit entries the store holds.
func (r *rig) auditCount() int {
	r.t.Helper()
	es, err := r.stack.Store.Audit(r.t.Context(), core.AuditFilter{})
	if err != nil {
		r.t.Fatal(err)
	}
	return len(es)
}

// Issue 13 acceptance 3 (the API's half): a write requested in Telegram is
// approved through the API by a person with the role, after a person
// without it got 403 with the policy's sentence; the run resumes and the
// tool runs once.
func TestAPIDecisionThroughPolicy(t *testing.T) {
	r := newRig(t)
	a := r.pauseForScale()

	status, raw := r.do(r.tokens["alice"], "GET", "/api/v1/approvals?status=pending", nil)
	var pending struct{ Approvals []core.Approval }
	if err := json.Unmarshal(raw, &pending); status != 200 || err != nil || len(pending.Approvals) != 1 || pending.Approvals[0].ID != a.ID {
		t.Fatalf("GET approvals = %d %s, want the one pending approval %s", status, raw, a.ID)
	}

	status, raw = r.do(r.tokens["bob"], "POST", "/api/v1/approvals/"+a.ID+"/decision", strings.NewReader(`{"decision":"approve","reason":"lgtm"}`))
	if status != http.StatusForbidden {
		t.Fatalf("bob's decision = %d %s, want 403", status, raw)
	}
	if code, msg := errorCode(t, raw); code != "forbidden" || !strings.Contains(msg, "sre") {
		t.Errorf("bob's refusal = %s %q, want forbidden with the policy's sentence naming sre", code, msg)
	}
	if got := r.stack.K8s.Calls(); len(got) != 0 {
		t.Fatalf("a refused decision ran %v", got)
	}

	status, raw = r.do(r.tokens["alice"], "POST", "/api/v1/approvals/"+a.ID+"/decision", strings.NewReader(`{"decision":"approve","reason":"lgtm"}`))
	var decided struct{ Approval core.Approval }
	if err := json.Unmarshal(raw, &decided); status != 200 || err != nil || decided.Approval.Status != core.ApprovalApproved || decided.Approval.DecidedBy.ID != "api:alice" {
		t.Fatalf("alice's decision = %d %s, want 200 approved by api:alice", status, raw)
	}
	// The pause completed the run's first part; the resumed run is the second.
	done := r.rec.WaitCompleted(t, 2)
	if done.Status != core.RunDone {
		t.Fatalf("run = %+v, want done", done)
	}
	if calls := r.stack.K8s.WaitCalls(1, 5*time.Second); len(calls) != 1 || calls[0].Tool != "scale_deployment" {
		t.Errorf("tool calls = %+v, want scale_deployment once", calls)
	}

	// A second decision is a conflict; the audit log has the refusal and
	// the approval with the API identity.
	status, raw = r.do(r.tokens["alice"], "POST", "/api/v1/approvals/"+a.ID+"/decision", strings.NewReader(`{"decision":"deny"}`))
	if status != http.StatusConflict {
		t.Errorf("deciding again = %d %s, want 409", status, raw)
	}
	status, raw = r.do(r.tokens["alice"], "GET", "/api/v1/audit?approval="+a.ID, nil)
	var audit struct{ Entries []core.AuditEntry }
	if err := json.Unmarshal(raw, &audit); status != 200 || err != nil {
		t.Fatalf("GET audit = %d %s", status, raw)
	}
	var kinds []string
	for _, e := range audit.Entries {
		kinds = append(kinds, e.Kind+":"+e.Actor.ID)
	}
	joined := strings.Join(kinds, " ")
	for _, want := range []string{"refused:api:bob", "approved:api:alice"} {
		if !strings.Contains(joined, want) {
			t.Errorf("audit of the approval = %s, want %s", joined, want)
		}
	}

	// The conversation shows the run and its messages.
	status, raw = r.do(r.tokens["bob"], "GET", "/api/v1/conversations/"+url.PathEscape(conv), nil)
	var view struct {
		Key      string
		Messages []core.Message
		Runs     []core.Run
	}
	if err := json.Unmarshal(raw, &view); status != 200 || err != nil || view.Key != conv || len(view.Runs) != 1 || view.Runs[0].Status != core.RunDone || len(view.Messages) == 0 {
		t.Errorf("GET conversation = %d %s, want the conversation with its done run", status, raw)
	}
	status, raw = r.do(r.tokens["bob"], "GET", "/api/v1/conversations", nil)
	var list struct {
		Conversations []struct {
			Key       string
			LatestRun *core.Run `json:"latest_run"`
		}
	}
	if err := json.Unmarshal(raw, &list); status != 200 || err != nil || len(list.Conversations) != 1 || list.Conversations[0].Key != conv {
		t.Errorf("GET conversations = %d %s, want %s listed", status, raw, conv)
	} else if lr := list.Conversations[0].LatestRun; lr == nil || lr.Status != core.RunDone || lr.ID != view.Runs[0].ID {
		t.Errorf("GET conversations: latest run %+v, want the done run %s", lr, view.Runs[0].ID)
	}
	status, raw = r.do(r.tokens["bob"], "GET", "/api/v1/schedules", nil)
	if status != 200 || !bytes.Contains(raw, []byte(`"morning-health"`)) {
		t.Errorf("GET schedules = %d %s", status, raw)
	}
}

// Issue 13 acceptance 7: bad input gets a specific 4xx with a JSON error,
// and nothing is stored (no vote, no audit entry, the approval pending).
func TestAPIBadInput(t *testing.T) {
	r := newRig(t)
	a := r.pauseForScale()
	revokedSecret, revoked, err := httpapi.NewToken("alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.stack.Store.CreateToken(t.Context(), revoked); err != nil {
		t.Fatal(err)
	}
	if err := r.stack.Store.RevokeToken(t.Context(), revoked.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	before := r.auditCount()
	decision := "/api/v1/approvals/" + a.ID + "/decision"
	approve := `{"decision":"approve"}`
	alice := r.tokens["alice"]
	big := `{"decision":"approve","reason":"` + strings.Repeat("x", 2<<20) + `"}`
	r.expectErrors(t, []badRequest{
		{"no token", "", "POST", decision, approve, 401, "unauthorized"},
		{"invalid token", httpapi.TokenPrefix + "not-a-token", "POST", decision, approve, 401, "unauthorized"},
		{"token of another scheme", "abc", "GET", "/api/v1/conversations", "", 401, "unauthorized"},
		{"revoked token", revokedSecret, "POST", decision, approve, 401, "unauthorized"},
		{"2 MB body", alice, "POST", decision, big, 413, "too_large"},
		{"malformed JSON", alice, "POST", decision, `{"decision":`, 400, "bad_json"},
		{"wrong type", alice, "POST", decision, `{"decision":true}`, 400, "bad_json"},
		{"unknown field", alice, "POST", decision, `{"decision":"approve","approver":"alice"}`, 400, "unknown_field"},
		{"trailing brace", alice, "POST", decision, `{"decision":"approve"}}`, 400, "bad_json"}, // found by FuzzJSONBody
		{"unknown decision", alice, "POST", decision, `{"decision":"maybe"}`, 400, "invalid"},
		{"unknown approval", alice, "POST", "/api/v1/approvals/0123456789abcdef/decision", approve, 404, "not_found"},
		{"unknown conversation", alice, "GET", "/api/v1/conversations/" + url.PathEscape("api:nope"), "", 404, "not_found"},
		{"unknown run", alice, "POST", "/api/v1/runs/nope/stop", "", 404, "not_found"},
		{"unknown endpoint", alice, "GET", "/api/v1/nope", "", 404, "not_found"},
	})
	got, err := r.stack.Store.Approval(t.Context(), a.ID)
	if err != nil || got.Status != core.ApprovalPending || len(got.Votes) != 0 {
		t.Errorf("approval after bad requests = %+v, %v; want pending without votes", got, err)
	}
	if n := r.auditCount(); n != before {
		t.Errorf("audit entries %d -> %d: a bad request stored something", before, n)
	}
	if got := r.stack.K8s.Calls(); len(got) != 0 {
		t.Errorf("tools ran: %v", got)
	}
}

// Issue 13 acceptance 8: a secret in a tool result (and in the model's
// answer quoting it, and in the tool call's arguments) never appears in any
// API response: checked on the raw bytes.
func TestAPIRedactsSecrets(t *testing.T) {
	r := newRig(t)
	secret := "ghp_" + strings.Repeat("Ab3dE", 7) + "x"
	if r.red.String(secret) == secret {
		t.Fatalf("the redactor does not know %s; pick another secret", secret)
	}
	r.stack.LLM.Push(
		toolCalls(call("c1", "get_logs", `{"pod":"`+secret+`","tail":2}`)),
		llmfake.Reply{Text: "The pod " + secret + " is healthy."},
	)
	if err := r.eng.Handle(t.Context(), core.Inbound{ConvKey: conv, MessageID: "m1", User: carol, Text: "logs of " + secret, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r.rec.WaitCompleted(t, 1)
	msgs, err := r.stack.Store.Messages(t.Context(), conv)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := json.Marshal(msgs)
	if !bytes.Contains(stored, []byte(secret)) {
		t.Fatalf("the store does not hold the secret; the test proves nothing: %s", stored)
	}
	alice := r.tokens["alice"]
	for _, path := range []string{
		"/api/v1/conversations",
		"/api/v1/conversations/" + url.PathEscape(conv),
		"/api/v1/approvals?status=pending",
		"/api/v1/audit",
		"/api/v1/audit?conversation=" + url.QueryEscape(conv),
	} {
		status, raw := r.do(alice, "GET", path, nil)
		if status != 200 {
			t.Errorf("GET %s = %d %s", path, status, raw)
		}
		if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte(secret[:12])) {
			t.Errorf("GET %s shows the secret: %s", path, raw)
		}
		if path == "/api/v1/conversations/"+url.PathEscape(conv) && !bytes.Contains(raw, []byte("[REDACTED:")) {
			t.Errorf("GET %s shows no redaction mark: %s", path, raw)
		}
	}
}

// A stop through the API ends a run awaiting approval and cancels its
// approval; a finished run is not stopped again.
func TestAPIStopRun(t *testing.T) {
	r := newRig(t)
	a := r.pauseForScale()
	status, raw := r.do(r.tokens["bob"], "POST", "/api/v1/runs/"+a.RunID+"/stop", nil)
	if status != 200 || !bytes.Contains(raw, []byte(`"stopped":true`)) {
		t.Fatalf("stop = %d %s, want stopped", status, raw)
	}
	got, err := r.stack.Store.Approval(t.Context(), a.ID)
	if err != nil || got.Status == core.ApprovalPending {
		t.Errorf("approval after stop = %+v, %v; want it no longer pending", got, err)
	}
	status, raw = r.do(r.tokens["bob"], "POST", "/api/v1/runs/"+a.RunID+"/stop", nil)
	if status != 200 || !bytes.Contains(raw, []byte(`"stopped":false`)) {
		t.Errorf("second stop = %d %s, want stopped false", status, raw)
	}
}
