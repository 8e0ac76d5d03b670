package discord_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Mention → a thread on the message, named after the request; the run
// streams into it by edits and ends with the exact text; a message in the
// thread without a mention continues the same conversation.
func TestMentionOpensThreadAndStreams(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	answer := words("pod", 80)
	s.llm.Push(llmfake.Reply{Text: answer, TokenDelay: 40 * time.Millisecond})
	m := s.say(channel, alice, s.fake.Mention()+" why are the web pods restarting?")

	th := s.thread(channel, m.ID)
	if th.Name != "why are the web pods restarting?" {
		t.Errorf("thread name = %q, want the request", th.Name)
	}
	msgs := s.waitFinal(th.ID, answer)
	if len(msgs) != 1 {
		t.Fatalf("thread shows %d messages, want 1:\n%s", len(msgs), dumpMessages(msgs))
	}
	if msgs[0].EditCount < 2 {
		t.Errorf("the reply was edited %d times; want it streamed by edits", msgs[0].EditCount)
	}
	if n := len(s.fake.CallsTo(discordtest.RouteCreateMessage)); n != 1 {
		t.Errorf("%d messages posted, want 1 (the draft)", n)
	}
	if got := botMessages(s.fake.Messages(channel), s.fake.Bot.ID); len(got) != 0 {
		t.Errorf("the bot wrote in the channel instead of the thread:\n%s", dumpMessages(got))
	}

	second := "The database is fine."
	s.llm.Push(llmfake.Reply{Text: second})
	s.say(th.ID, alice, "and the database?")
	msgs = s.waitFinal(th.ID, second)
	if len(msgs) != 2 || strings.TrimSpace(msgs[0].Content) != answer {
		t.Errorf("thread after the follow-up:\n%s", dumpMessages(msgs))
	}
	reqs := s.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var transcript []string
	for _, msg := range reqs[1].Messages {
		transcript = append(transcript, msg.Content)
	}
	joined := strings.Join(transcript, "\n")
	if !strings.Contains(joined, "why are the web pods restarting?") || !strings.Contains(joined, "and the database?") {
		t.Errorf("the follow-up did not continue the conversation; second request:\n%s", joined)
	}
}

// Slash command → acknowledged within 3 s with a deferred response, an
// incident thread on the response, and the reply streamed into it.
func TestSlashCommandOpensIncidentThread(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	answer := words("queue", 40)
	s.llm.Push(llmfake.Reply{Text: answer, TokenDelay: 30 * time.Millisecond})
	token, err := s.fake.Command(channel, alice, "request", map[string]string{"text": "check the payments queue"})
	if err != nil {
		t.Fatal(err)
	}
	var it discordtest.Interaction
	s.fake.Wait(10*time.Second, func() bool { it, _ = s.fake.Interaction(token); return it.Original != "" })
	if !it.Acked || it.AckType != discordtest.CallbackDeferredMessage {
		t.Fatalf("interaction = %+v, want a deferred channel message", it)
	}
	if d := it.AckedAt.Sub(it.Dispatched); d >= 3*time.Second {
		t.Errorf("acknowledged after %v, Discord allows 3 s", d)
	}
	th := s.thread(channel, it.Original)
	if th.Name != "check the payments queue" {
		t.Errorf("thread name = %q", th.Name)
	}
	head, _ := s.fake.Message(channel, it.Original)
	if !strings.Contains(head.Content, "Incident request") || !strings.Contains(head.Content, "check the payments queue") || head.Deferred {
		t.Errorf("thread head = %q (deferred %v), want the request", head.Content, head.Deferred)
	}
	msgs := s.waitFinal(th.ID, answer)
	if len(msgs) != 1 {
		t.Errorf("thread:\n%s", dumpMessages(msgs))
	}
}

// Approve by an allowed approver executes; a stranger's click is refused
// privately and audited; a second click is told it was already decided.
func TestApprovalByAllowedApprover(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.llm.Push(
		llmfake.Reply{ToolCalls: []llmfake.ToolCall{{ID: "c1", Name: "load_toolset", Arguments: `{"toolset":"k8s","include_write_tools":true}`}}},
		llmfake.Reply{Text: "Scaling web to 3.", ToolCalls: []llmfake.ToolCall{{ID: "c2", Name: "scale_deployment", Arguments: `{"name":"web","replicas":3}`}}},
		llmfake.Reply{Text: "Scaled web to 3 replicas."},
	)
	m := s.say(channel, alice, s.fake.Mention()+" scale web to 3")
	th := s.thread(channel, m.ID)
	msgs := s.waitMessages(th.ID, "an approval card", func(ms []discordtest.Message) bool {
		return len(ms) > 0 && len(ms[len(ms)-1].Buttons) == 2
	})
	card := msgs[len(msgs)-1]
	approve, deny := card.Buttons[0], card.Buttons[1]
	act, id, ok := render.ParseButtonData(approve.CustomID)
	if !ok || act != render.ActionApprove || len(approve.CustomID) > 100 || len(deny.CustomID) > 100 {
		t.Fatalf("approve button %+v: want an approval reference within 100 characters", approve)
	}
	for _, b := range card.Buttons {
		if strings.Contains(b.CustomID, "web") || strings.Contains(b.CustomID, "replicas") {
			t.Errorf("custom_id %q carries the arguments", b.CustomID)
		}
	}
	if !strings.Contains(deny.Label, "Deny") || deny.Style != 4 {
		t.Errorf("deny button = %+v, want a red Deny", deny)
	}

	// A stranger: refused privately, audited, nothing runs.
	click(t, s, th.ID, mallory, card.ID, approve.CustomID)
	waitEphemeral(t, s, mallory, "not allowed")
	audit, err := s.store.Audit(context.Background(), core.AuditFilter{ApprovalID: id})
	if err != nil {
		t.Fatal(err)
	}
	if !hasAudit(audit, core.AuditRefused, mallory.ID) {
		t.Errorf("the stranger's click was not audited as refused: %+v", audit)
	}
	if c, _ := s.fake.Message(th.ID, card.ID); len(c.Buttons) != 2 {
		t.Errorf("the card lost its buttons after a refused click: %+v", c)
	}

	// The approver and the requester click at once: one decides, the
	// other is told it was decided already.
	click(t, s, th.ID, bob, card.ID, approve.CustomID)
	click(t, s, th.ID, alice, card.ID, approve.CustomID)
	// The resumed run continues below the card: the tool's line, then the answer.
	s.waitMessages(th.ID, "the answer after the approval", func(ms []discordtest.Message) bool {
		last := ms[len(ms)-1]
		return len(last.Buttons) == 0 && strings.Contains(last.Content, "✅ `scale_deployment`") &&
			strings.HasSuffix(last.Content, "Scaled web to 3 replicas.")
	})
	if calls := s.k8s.Calls(); len(calls) != 1 || calls[0].Tool != "scale_deployment" {
		t.Errorf("tool calls = %+v, want scale_deployment once", calls)
	}
	outcome := regexp.MustCompile(`Approved by @(bob|alice)`)
	var got discordtest.Message
	if !s.fake.Wait(10*time.Second, func() bool {
		got, _ = s.fake.Message(th.ID, card.ID)
		return len(got.Buttons) == 0 && outcome.MatchString(got.Content)
	}) {
		t.Errorf("card after the decision = %q %v, want the outcome and no buttons", got.Content, got.Buttons)
	}
	if !s.fake.Wait(10*time.Second, func() bool { return countEphemeral(s, "already decided", bob, alice) == 1 }) {
		t.Errorf("want exactly one of the two clicks told it was already decided; bob: %v alice: %v",
			s.fake.Ephemerals(bob.ID), s.fake.Ephemerals(alice.ID))
	}
}

// A 6,000-character reply becomes 3+ messages in the thread: nothing lost,
// nothing repeated, no code fence split.
func TestLongReplyRotates(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	answer, blocks := rendertest.LongAnswer(6000, 12)
	s.llm.Push(llmfake.Reply{Text: answer, TokenDelay: 2 * time.Millisecond})
	m := s.say(channel, alice, s.fake.Mention()+" write the runbook")
	th := s.thread(channel, m.ID)
	msgs := s.waitMessages(th.ID, "the whole answer", func(ms []discordtest.Message) bool {
		if len(ms) == 0 || len(ms[len(ms)-1].Buttons) != 0 {
			return false
		}
		return strings.Contains(ms[len(ms)-1].Content, "p-end")
	})
	if len(msgs) < 3 {
		t.Errorf("%d messages for %d characters, want 3 or more", len(msgs), len(answer))
	}
	var contents []string
	for i, msg := range msgs {
		if n := render.Len(msg.Content); n > 2000 {
			t.Errorf("message %d has %d characters", i, n)
		}
		if strings.Count(msg.Content, "```")%2 != 0 {
			t.Errorf("message %d has an unbalanced code fence:\n%s", i, msg.Content)
		}
		contents = append(contents, msg.Content)
	}
	rendertest.CheckWhole(t, answer, blocks, contents)
}

// A 429 on an edit is honoured (the next edit waits retry_after), the
// final text arrives, and nothing is posted twice.
func TestRateLimitedEdit(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const retry = 1500 * time.Millisecond
	s.fake.RateLimit(discordtest.RouteEditMessage, 1, retry, false)
	answer := words("edit", 60)
	s.llm.Push(llmfake.Reply{Text: answer, TokenDelay: 40 * time.Millisecond})
	m := s.say(channel, alice, s.fake.Mention()+" summarise the alerts")
	th := s.thread(channel, m.ID)
	msgs := s.waitFinal(th.ID, answer)
	if len(msgs) != 1 {
		t.Errorf("thread shows %d messages, want 1:\n%s", len(msgs), dumpMessages(msgs))
	}
	var limited time.Time
	for _, c := range s.fake.CallsTo(discordtest.RouteEditMessage) {
		switch {
		case c.Status == 429:
			limited = c.Time
		case !limited.IsZero() && c.Time.Sub(limited) < retry:
			t.Errorf("an edit %v after the 429, before retry_after %v", c.Time.Sub(limited), retry)
		}
	}
	if limited.IsZero() {
		t.Fatal("no edit was answered 429")
	}
	if n := len(s.fake.CallsTo(discordtest.RouteCreateMessage)); n != 1 {
		t.Errorf("%d posts, want 1 (no duplicates)", n)
	}
}

// The gateway connection drops mid-run: the session resumes, a message sent
// meanwhile is replayed and handled once, and the run completes in the
// thread.
func TestGatewayDropMidRun(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	hold := make(chan struct{})
	first, second := words("before", 30), "The database is fine too."
	s.llm.Push(llmfake.Reply{Text: first, Hold: hold}, llmfake.Reply{Text: second})
	m := s.say(channel, alice, s.fake.Mention()+" is the cluster healthy?")
	th := s.thread(channel, m.ID)
	s.waitMessages(th.ID, "the first streamed words", func(ms []discordtest.Message) bool { return len(ms) == 1 })

	s.fake.Drop()
	s.say(th.ID, alice, "check the database as well")
	if !s.fake.Wait(20*time.Second, func() bool { return s.fake.Resumes() == 1 && s.fake.Connected() }) {
		t.Fatalf("the gateway session was not resumed (identifies %d, resumes %d)", len(s.fake.Identifies()), s.fake.Resumes())
	}
	if s.fake.Replayed() == 0 {
		t.Error("nothing was replayed on Resume: the message was not sent while the connection was down")
	}
	close(hold)
	msgs := s.waitFinal(th.ID, second)
	if len(msgs) != 2 || strings.TrimSpace(msgs[0].Content) != first {
		t.Errorf("thread:\n%s", dumpMessages(msgs))
	}
	if n := len(s.fake.Identifies()); n != 1 {
		t.Errorf("%d identifies, want 1 (a resume, not a new session)", n)
	}
	reqs := s.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	n := 0
	for _, msg := range reqs[1].Messages {
		n += strings.Count(msg.Content, "check the database as well")
	}
	if n != 1 {
		t.Errorf("the message sent during the drop reached the model %d times, want once", n)
	}
}

// A session Discord no longer knows is not resumed: the bot identifies
// again and keeps working.
func TestGatewayInvalidSessionReidentifies(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.fake.ForgetSessions()
	s.fake.Drop()
	if !s.fake.Wait(20*time.Second, func() bool { return len(s.fake.Identifies()) == 2 && s.fake.Connected() }) {
		t.Fatalf("the bot did not identify again (identifies %d, resumes %d)", len(s.fake.Identifies()), s.fake.Resumes())
	}
	s.llm.Push(llmfake.Reply{Text: "Still here."})
	m := s.say(channel, alice, s.fake.Mention()+" are you there?")
	s.waitFinal(s.thread(channel, m.ID).ID, "Still here.")
}

// Connections lost one after another, each as soon as the session was
// resumed: every loss is resumed (never a new session), and the mention
// sent while the connection was down is handled exactly once.
func TestGatewayRepeatedDropsLoseNothing(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	const drops = 3
	var asked []discordtest.Message
	for i := 1; i <= drops; i++ {
		s.llm.Push(llmfake.Reply{Text: "On it."})
		s.fake.Drop()
		asked = append(asked, s.say(channel, alice, fmt.Sprintf("%s question %d", s.fake.Mention(), i)))
		if !s.fake.Wait(20*time.Second, func() bool { return s.fake.Resumes() == i && s.fake.Connected() }) {
			t.Fatalf("drop %d was not resumed (identifies %d, resumes %d)", i, len(s.fake.Identifies()), s.fake.Resumes())
		}
	}
	for _, m := range asked {
		s.waitFinal(s.thread(channel, m.ID).ID, "On it.")
	}
	if n := len(s.fake.Identifies()); n != 1 {
		t.Errorf("%d identifies, want 1 (every drop resumed)", n)
	}
	if n := s.fake.Resumes(); n != drops {
		t.Errorf("%d resumes, want %d (no reconnection but after a drop)", n, drops)
	}
	if n := len(s.llm.Requests()); n != drops {
		t.Errorf("%d model requests, want %d", n, drops)
	}
}

// Discord asks the bot to reconnect (op 7, before a gateway server
// restarts): the bot resumes its session and misses nothing.
func TestGatewayReconnectRequestResumes(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.llm.Push(llmfake.Reply{Text: "Still here."})
	s.fake.Reconnect()
	m := s.say(channel, alice, s.fake.Mention()+" are you there?")
	if !s.fake.Wait(20*time.Second, func() bool { return s.fake.Resumes() == 1 && s.fake.Connected() }) {
		t.Fatalf("the session was not resumed (identifies %d, resumes %d)", len(s.fake.Identifies()), s.fake.Resumes())
	}
	s.waitFinal(s.thread(channel, m.ID).ID, "Still here.")
	if n := len(s.fake.Identifies()); n != 1 {
		t.Errorf("%d identifies, want 1 (a resume, not a new session)", n)
	}
}

// A connection that silently stops carrying anything (no dispatches, no
// heartbeat ACKs) is noticed by its unacknowledged heartbeats and resumed;
// the mention sent meanwhile is replayed and handled.
func TestGatewayZombieConnectionResumes(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.llm.Push(llmfake.Reply{Text: "Back."})
	s.fake.Zombie()
	m := s.say(channel, alice, s.fake.Mention()+" anyone?")
	if !s.fake.Wait(20*time.Second, func() bool { return s.fake.Resumes() == 1 && s.fake.Connected() }) {
		t.Fatalf("the zombie connection was not replaced (identifies %d, resumes %d)", len(s.fake.Identifies()), s.fake.Resumes())
	}
	s.waitFinal(s.thread(channel, m.ID).ID, "Back.")
	if s.fake.Replayed() == 0 {
		t.Error("nothing was replayed on Resume")
	}
	if n := len(s.fake.Identifies()); n != 1 {
		t.Errorf("%d identifies, want 1 (a resume, not a new session)", n)
	}
}

func click(t *testing.T, s *stack, ch string, u discordtest.User, msg, customID string) {
	t.Helper()
	if _, err := s.fake.Click(ch, u, msg, customID); err != nil {
		t.Fatal(err)
	}
}

func waitEphemeral(t *testing.T, s *stack, u discordtest.User, text string) {
	t.Helper()
	if !s.fake.Wait(10*time.Second, func() bool { return countEphemeral(s, text, u) > 0 }) {
		t.Fatalf("%s was not told %q privately; ephemerals: %+v", u.Name, text, s.fake.Ephemerals(u.ID))
	}
}

// countEphemeral counts the private messages to users that contain text.
func countEphemeral(s *stack, text string, users ...discordtest.User) int {
	n := 0
	for _, u := range users {
		for _, m := range s.fake.Ephemerals(u.ID) {
			if strings.Contains(m.Content, text) {
				n++
			}
		}
	}
	return n
}

func hasAudit(es []core.AuditEntry, kind, actor string) bool {
	for _, e := range es {
		if e.Kind == kind && e.Actor.ID == actor {
			return true
		}
	}
	return false
}
