package memory_test

import (
	"strings"
	"testing"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

func command(t *testing.T, c core.Commands, who core.Actor, isAdmin bool, text string) (string, bool) {
	t.Helper()
	return c.Command(t.Context(), core.CommandCall{ConvKey: conv, User: who, Person: who.ID, Admin: isAdmin, Text: text})
}

func TestCommands(t *testing.T) {
	onStores(t, func(t *testing.T, s docs.Store) {
		m := mem(t, s)
		chScope := docs.Scope{Kind: docs.Channel, Key: channel}

		reply, ok := command(t, m, alice, false, "/remember payments-api 502s after a deploy stop within a minute; do not roll back before that.")
		if want := "📝 Remembered as notes/payments-api-502s-after-a-deploy-stop-within-a-minute-do-not.md (channel memory). " +
			"`/forget notes/payments-api-502s-after-a-deploy-stop-within-a-minute-do-not.md` undoes it."; !ok || reply != want {
			t.Errorf("/remember = %q, %v; want %q", reply, ok, want)
		}
		d, err := s.DocumentAt(t.Context(), chScope, "notes/payments-api-502s-after-a-deploy-stop-within-a-minute-do-not.md")
		if err != nil {
			t.Fatal(err)
		}
		if d.Trust != docs.UserAuthored || d.Status != docs.Active || d.Type != docs.ConversationNote || d.Author != alice.ID ||
			d.Title != "payments-api 502s after a deploy stop within a minute; do not roll back…" || d.Source.ConvKey != conv {
			t.Errorf("remembered = %+v", d)
		}
		reply, ok = command(t, m, bob, false, "/remember@opsgate_bot Bob's note about checkout")
		if !ok || !strings.Contains(reply, "notes/bob-s-note-about-checkout.md") {
			t.Errorf("/remember@bot = %q, %v", reply, ok)
		}
		reply, _ = command(t, m, alice, false, "/remember aws_access_key_id = AKIAIOSFODNN7EXAMPLE")
		if reply != "⛔ Not remembered: secret: aws_access_key. Nothing was stored." {
			t.Errorf("/remember of a secret = %q", reply)
		}
		if reply, _ = command(t, m, alice, false, "/remember"); !strings.HasPrefix(reply, "Usage: `/remember TEXT`") {
			t.Errorf("/remember alone = %q", reply)
		}
		if n := len(all(t, s)); n != 2 {
			t.Errorf("documents: %d, want 2", n)
		}

		reply, _ = command(t, m, alice, false, "/memory payments deploy")
		if want := "🔎 Memory for “payments deploy”:\n1. `notes/payments-api-502s-after-a-deploy-stop-within-a-minute-do-not.md`: " +
			"payments-api 502s after a deploy stop within a minute; do not roll back… (conversation_note, channel, user_authored)"; reply != want {
			t.Errorf("/memory =\n%s\nwant\n%s", reply, want)
		}
		if reply, _ = command(t, m, alice, false, "/memory kafka"); reply != "🔎 Nothing in memory matches “kafka”." {
			t.Errorf("/memory kafka = %q", reply)
		}
		if reply, _ = command(t, m, alice, false, "/memory"); !strings.HasPrefix(reply, "Memory commands:") {
			t.Errorf("/memory alone = %q", reply)
		}

		// Forgetting: one's own, not another's, any as an admin.
		reply, _ = command(t, m, alice, false, "/forget notes/bob-s-note-about-checkout.md")
		if reply != "🚫 notes/bob-s-note-about-checkout.md (channel memory) was written by slack:UBOB: only its author or an admin can forget it." {
			t.Errorf("/forget of bob's note by alice = %q", reply)
		}
		reply, _ = command(t, m, alice, false, "/forget notes/payments-api-502s-after-a-deploy-stop-within-a-minute-do-not.md")
		if reply != "🗑️ Forgot notes/payments-api-502s-after-a-deploy-stop-within-a-minute-do-not.md (channel memory): it is archived and no longer used in answers." {
			t.Errorf("/forget own = %q", reply)
		}
		reply, _ = command(t, m, admin, true, "/forget@opsgate_bot `notes/bob-s-note-about-checkout.md`")
		if !strings.HasPrefix(reply, "🗑️ Forgot notes/bob-s-note-about-checkout.md") {
			t.Errorf("/forget by an admin = %q", reply)
		}
		for _, d := range all(t, s) {
			if d.Status != docs.Archived {
				t.Errorf("%s is %s after /forget", d.Path, d.Status)
			}
		}
		vs := history(t, s, d.ID)
		if len(vs) != 2 || vs[1].Note != "forgotten by slack:UALICE" {
			t.Errorf("history = %+v", vs)
		}
		if reply, _ = command(t, m, alice, false, "/forget notes/payments-api-502s-after-a-deploy-stop-within-a-minute-do-not.md"); !strings.Contains(reply, "already forgotten") {
			t.Errorf("/forget again = %q", reply)
		}
		if reply, _ = command(t, m, alice, false, "/forget notes/none.md"); reply != "🤷 There is no notes/none.md in the memory this conversation sees." {
			t.Errorf("/forget of nothing = %q", reply)
		}
		if reply, _ = command(t, m, alice, false, "/memory payments deploy"); !strings.Contains(reply, "Nothing in memory") {
			t.Errorf("/memory after /forget = %q", reply)
		}

		for _, text := range []string{"/stop", "/rememberx a", "remember this", "/status"} {
			if reply, ok := command(t, m, alice, false, text); ok || reply != "" {
				t.Errorf("%q = %q, %v; want not a command", text, reply, ok)
			}
		}
	})
}

// The engine answers the commands without a model call.
func TestCommandsThroughTheEngine(t *testing.T) {
	onStores(t, func(t *testing.T, s docs.Store) {
		r := newRig(t, s)
		if err := r.eng.Handle(t.Context(), core.Inbound{ConvKey: conv, MessageID: "m1", User: alice, Text: "/remember The payments on-call is in #payments-oncall"}); err != nil {
			t.Fatal(err)
		}
		ev := r.rec.WaitCompleted(t, 1)
		if !strings.HasPrefix(ev.Text, "📝 Remembered as notes/the-payments-on-call-is-in-payments-oncall.md (channel memory).") {
			t.Errorf("completed text = %q", ev.Text)
		}
		if n := len(r.stack.LLM.Requests()); n != 0 {
			t.Errorf("model requests: %d, want none", n)
		}
	})
}
