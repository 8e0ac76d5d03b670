package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/core/coretest/mcpfake"
)

// The people of TestAPIApprovesATelegramWrite: alice and bob chat in a
// Telegram group; carol and dave only use the API.
const (
	aliceTG = 1001
	bobTG   = 1002
	opsChat = -1009
)

// quorumPolicy makes scale_deployment need two sre approvals, never the
// requester's: alice is an sre, so her own click is refused because of
// self-approval, not because of her role.
var quorumPolicy = fmt.Sprintf(`
people:
  alice: {telegram: "%d"}
  bob:   {telegram: "%d"}
  carol: {api: carol}
  dave:  {api: dave}
roles:
  sre: [alice, bob, carol]
visibility:           # dave sees the chats, so the policy, not visibility, refuses him
  - people: [dave]
    conversations: ["telegram:*"]
rules:
  - name: scaling-needs-two
    match: {server: k8s, tool: scale_deployment}
    action: ask
    approvers: [sre]
    quorum: 2
    self_approval: false
`, aliceTG, bobTG)

// apiCall sends method path with body (none when empty) as token (none
// when empty) to a serve, checks that the answer is JSON, and returns its
// status and body.
func apiCall(t *testing.T, s *served, token, method, path, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	return resp.StatusCode, string(raw)
}

// apiError decodes an error body, which must hold nothing but the error.
func apiError(t *testing.T, body string) (code, message string) {
	t.Helper()
	var b map[string]map[string]string
	if err := json.Unmarshal([]byte(body), &b); err != nil || len(b) != 1 || len(b["error"]) != 2 || b["error"]["code"] == "" {
		t.Fatalf("not an error body {\"error\": {\"code\", \"message\"}}: %s (%v)", body, err)
	}
	return b["error"]["code"], b["error"]["message"]
}

// pendingApproval returns the approval id as GET /api/v1/approvals?status=pending
// lists it, failing unless it is the only pending one.
func pendingApproval(t *testing.T, s *served, token, id string) core.Approval {
	t.Helper()
	status, body := apiCall(t, s, token, "GET", "/api/v1/approvals?status=pending", "")
	var got struct{ Approvals []core.Approval }
	if err := json.Unmarshal([]byte(body), &got); status != http.StatusOK || err != nil {
		t.Fatalf("GET approvals = %d %s (%v)", status, body, err)
	}
	if len(got.Approvals) != 1 || got.Approvals[0].ID != id {
		t.Fatalf("pending approvals = %s, want %s alone", body, id)
	}
	return got.Approvals[0]
}

// approvalAudit is the audit of one approval through the API, as
// kind:identity.
func approvalAudit(t *testing.T, s *served, token, id string) []string {
	t.Helper()
	status, body := apiCall(t, s, token, "GET", "/api/v1/audit?approval="+id, "")
	var got struct{ Entries []core.AuditEntry }
	if err := json.Unmarshal([]byte(body), &got); status != http.StatusOK || err != nil {
		t.Fatalf("GET audit = %d %s (%v)", status, body, err)
	}
	var out []string
	for _, e := range got.Entries {
		out = append(out, e.Kind+":"+e.Actor.ID)
	}
	return out
}

// tgMessage waits for a message of chat that cond accepts and returns it.
func tgMessage(t *testing.T, tg *telegramtest.Server, chat int64, what string, log fmt.Stringer, cond func(telegramtest.Message) bool) telegramtest.Message {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		changed := tg.Changed()
		for _, m := range tg.Messages(chat) {
			if cond(m) {
				return m
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no %s in the chat; messages: %+v\nlog:\n%s", what, tg.Messages(chat), log.String())
		}
	}
}

// tgAnswer waits for the answer to a button press.
func tgAnswer(t *testing.T, tg *telegramtest.Server, u string, log fmt.Stringer) telegramtest.Answer {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		changed := tg.Changed()
		for _, a := range tg.Answers() {
			if a.QueryID == u {
				return a
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the press %s was never answered; answers: %+v\nlog:\n%s", u, tg.Answers(), log.String())
		}
	}
}

// Issue 13 acceptance 3, through serve: a write requested in Telegram is
// approved through the API by a person with the role; a person without it
// gets 403; quorum 2 needs two different people across API and chat.
func TestAPIApprovesATelegramWrite(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) { apiApprovesATelegramWrite(t, store) })
	}
}

func apiApprovesATelegramWrite(t *testing.T, store string) {
	dir := t.TempDir()
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	k8s := mcpfake.New()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(quorumPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dir, model.URL, k8s.ServeHTTP(t), fmt.Sprintf(
		"policy:\n  file: %s\ntelegram:\n  token: %q\n  api_url: %s\n  allowed_users: [%d, %d]\n",
		pol, telegramtest.Token, tg.URL, aliceTG, bobTG))
	if store == "postgres" {
		usePostgres(t, cfg)
	}
	carol, _ := createToken(t, cfg, "carol")
	dave, _ := createToken(t, cfg, "dave")
	revoked, revokedID := createToken(t, cfg, "carol")
	if code, _, stderr := runMain(t, testEnv(), "token", "revoke", revokedID, "--config", cfg); code != exitOK {
		t.Fatalf("token revoke: exit %d: %s", code, stderr)
	}
	model.Push(
		toolCall("c0", "load_toolset", `{"toolset":"k8s","include_write_tools":true}`),
		toolCall("c1", "scale_deployment", `{"name":"web","replicas":3}`),
		llmfake.Reply{Text: "Web runs 3 replicas now."},
	)
	s := serveConfig(t, cfg)

	// alice asks in the group; the card appears there.
	alice, bob := telegramtest.User(aliceTG, "alice"), telegramtest.User(bobTG, "bob")
	tg.Push(tg.NewTextUpdate(telegramtest.GroupChat(opsChat), alice, "@"+telegramtest.BotUsername+" scale web to 3"))
	card := tgMessage(t, tg, opsChat, "approval card", s.log, func(m telegramtest.Message) bool {
		return strings.Contains(m.Visible, "Approval needed") && len(m.Buttons) == 2
	})
	mustContain(t, "the card", card.Visible, "scale_deployment", `"replicas": 3`, "Requested by @alice", "0 of 2 approvals")
	action, prefix, ok := render.ParseButtonData(card.Buttons[0].Data)
	if !ok || action != render.ActionApprove {
		t.Fatalf("the card's first button is %+v, want Approve", card.Buttons[0])
	}

	// The API lists it.
	status, body := apiCall(t, s, carol, "GET", "/api/v1/approvals?status=pending", "")
	var listed struct{ Approvals []core.Approval }
	if err := json.Unmarshal([]byte(body), &listed); status != http.StatusOK || err != nil || len(listed.Approvals) != 1 {
		t.Fatalf("GET approvals = %d %s, want the one pending approval", status, body)
	}
	a := listed.Approvals[0]
	if !strings.HasPrefix(a.ID, prefix) || a.Tool != "scale_deployment" || a.Requester.ID != fmt.Sprintf("telegram:%d", aliceTG) || a.Quorum() != 2 {
		t.Fatalf("pending approval = %+v, want alice's scale_deployment behind the card's button %q with quorum 2", a, prefix)
	}
	decision := "/api/v1/approvals/" + a.ID + "/decision"
	approve := `{"decision":"approve","reason":"lgtm"}`

	// dave has no role: 403 with the policy's sentence, nothing else.
	status, body = apiCall(t, s, dave, "POST", decision, approve)
	if status != http.StatusForbidden {
		t.Fatalf("dave's decision = %d %s, want 403", status, body)
	}
	if code, msg := apiError(t, body); code != "forbidden" || msg != "Only bob or carol (approvers: sre) may decide this request." {
		t.Errorf("dave's refusal = %s %q, want forbidden with the policy's sentence", code, msg)
	}
	// No token, a revoked token: 401, whoever the token was for.
	for name, token := range map[string]string{"no token": "", "revoked token": revoked} {
		status, body = apiCall(t, s, token, "POST", decision, approve)
		if code, _ := apiError(t, body); status != http.StatusUnauthorized || code != "unauthorized" {
			t.Errorf("%s: %d %s, want 401 unauthorized", name, status, body)
		}
	}
	if got := pendingApproval(t, s, carol, a.ID); len(got.Votes) != 0 {
		t.Errorf("after refusals the approval has votes %+v, want none", got.Votes)
	}

	// carol approves: counted, 1 of 2, still pending; the card says so.
	status, body = apiCall(t, s, carol, "POST", decision, approve)
	var voted struct{ Approval core.Approval }
	if err := json.Unmarshal([]byte(body), &voted); status != http.StatusOK || err != nil {
		t.Fatalf("carol's decision = %d %s, want 200", status, body)
	}
	if got := voted.Approval; got.Status != core.ApprovalPending || got.Approvals() != 1 || len(got.Votes) != 1 ||
		got.Votes[0].Actor.ID != "api:carol" || got.Votes[0].Person != "carol" || got.Votes[0].Reason != "lgtm" {
		t.Fatalf("after carol's vote = %s, want pending with carol's one approval", body)
	}
	tgMessage(t, tg, opsChat, "1 of 2 on the card", s.log, func(m telegramtest.Message) bool {
		return m.ID == card.ID && strings.Contains(m.Visible, "1 of 2 approvals: carol") && len(m.Buttons) == 2
	})
	if calls := k8s.Calls(); len(calls) != 0 {
		t.Fatalf("the tool ran after one approval of two: %+v", calls)
	}

	// carol again: her vote is counted once.
	status, body = apiCall(t, s, carol, "POST", decision, approve)
	if code, _ := apiError(t, body); status != http.StatusConflict || code != "already_voted" {
		t.Errorf("carol's second decision = %d %s, want 409 already_voted", status, body)
	}

	// alice, the requester, may not approve her own request.
	press := tg.Click(opsChat, card.ID, alice, card.Buttons[0].Data)
	ans := tgAnswer(t, tg, press.CallbackQuery.ID, s.log)
	if !ans.ShowAlert || !strings.Contains(ans.Text, "You asked for this yourself and self-approval is off for rule scaling-needs-two.") {
		t.Errorf("alice's press was answered %+v, want an alert about self-approval", ans)
	}
	if got := pendingApproval(t, s, carol, a.ID); got.Approvals() != 1 || len(got.Votes) != 1 {
		t.Errorf("after alice's press the votes are %+v, want carol's alone", got.Votes)
	}

	// bob completes the quorum: the tool runs once, as approved.
	press = tg.Click(opsChat, card.ID, bob, card.Buttons[0].Data)
	if ans := tgAnswer(t, tg, press.CallbackQuery.ID, s.log); ans.ShowAlert || !strings.Contains(ans.Text, "Approved: running scale_deployment") {
		t.Errorf("bob's press was answered %+v, want approved", ans)
	}
	tgMessage(t, tg, opsChat, "the answer after the approval", s.log, func(m telegramtest.Message) bool {
		return strings.Contains(m.Visible, "Web runs 3 replicas now.")
	})
	tgMessage(t, tg, opsChat, "the outcome on the card", s.log, func(m telegramtest.Message) bool {
		return m.ID == card.ID && strings.Contains(m.Visible, "Approved by carol and @bob") && len(m.Buttons) == 0
	})
	status, body = apiCall(t, s, carol, "GET", "/api/v1/approvals?status=pending", "")
	if status != http.StatusOK || !strings.Contains(body, `"approvals":[]`) {
		t.Errorf("pending approvals after the quorum = %d %s, want none", status, body)
	}

	// The audit log has every attempt and both votes, with their identities.
	got := approvalAudit(t, s, carol, a.ID)
	wantAudit := []string{
		"proposed:" + a.Requester.ID,
		"refused:api:dave",
		"vote:api:carol",
		fmt.Sprintf("refused:telegram:%d", aliceTG),
		fmt.Sprintf("approved:telegram:%d", bobTG),
		fmt.Sprintf("executed:telegram:%d", bobTG),
	}
	if diff := cmp.Diff(wantAudit, got); diff != "" {
		t.Errorf("audit of the approval (-want +got):\n%s", diff)
	}
	s.stop(t)
	// Once serve has stopped, nothing can run any more: exactly once.
	want := []mcpfake.Call{{Tool: "scale_deployment", Args: map[string]any{"name": "web", "replicas": float64(3)}}}
	if diff := cmp.Diff(want, k8s.Calls()); diff != "" {
		t.Errorf("MCP calls (-want +got):\n%s", diff)
	}

	code, out, errOut := runMain(t, testEnv(), "audit", "--config", cfg)
	if code != exitOK {
		t.Fatalf("audit: exit %d: %s", code, errOut)
	}
	mustInOrder(t, out, "refused   api:dave", "vote      api:carol", "approval 1 of 2: lgtm", fmt.Sprintf("refused   telegram:%d", aliceTG),
		fmt.Sprintf("approved  telegram:%d", bobTG), fmt.Sprintf("executed  telegram:%d", bobTG))
	if code, out, errOut := runMain(t, testEnv(), "audit", "verify", "--config", cfg); code != exitOK {
		t.Errorf("audit verify: exit %d\n%s%s", code, out, errOut)
	}
	for _, secret := range []string{carol, dave, revoked} {
		if strings.Contains(s.log.String(), secret) || strings.Contains(out, secret) {
			t.Errorf("a token shows in the log or the audit")
		}
	}
}
