package main

import (
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Issue 11, acceptance 2 (the lease part): two `opsgate serve` processes
// on one Postgres with the Telegram fake: the poller runs on exactly one;
// after kill -9 of that one, the other polls within 15 s and answers what
// arrives next, once.
func TestTelegramPollerTakeoverAfterKill9(t *testing.T) {
	dir := t.TempDir()
	tg := telegramtest.New(t)
	model := llmfake.New(t)
	model.Push(llmfake.Reply{Text: "Answered before the kill."}, llmfake.Reply{Text: "Answered after the takeover."})
	cfg := writeConfig(t, dir, model.URL, "", telegramConfig(tg))
	usePostgres(t, cfg)

	a := startReplica(t, dir, cfg, "a")
	waitFor(t, 15*time.Second, "replica a to take the poller lease", func() bool { return strings.Contains(a.log.String(), "lease: taken") })
	b := startReplica(t, dir, cfg, "b")
	waitFor(t, 15*time.Second, "replica b to stand by", func() bool { return strings.Contains(b.log.String(), "standing by") })

	chat, alice := telegramtest.PrivateChat(42), telegramtest.User(42, "alice")
	tg.Push(tg.NewTextUpdate(chat, alice, "first"))
	waitFor(t, 15*time.Second, "the first answer", func() bool { return answered(tg.Messages(42), "Answered before the kill.") })
	if strings.Contains(b.log.String(), "receiving updates by long polling") {
		t.Fatalf("both replicas poll:\n%s", b.log.String())
	}

	a.kill9()
	killed := time.Now()
	waitFor(t, 15*time.Second, "replica b to take over the poller", func() bool { return strings.Contains(b.log.String(), "receiving updates by long polling") })
	takeover := time.Since(killed)
	t.Logf("takeover after kill -9: %s", takeover.Round(time.Millisecond))

	tg.Push(tg.NewTextUpdate(chat, alice, "second"))
	waitFor(t, 15*time.Second, "the answer from replica b", func() bool { return answered(tg.Messages(42), "Answered after the takeover.") })
	b.stop()
	n := 0
	for _, m := range tg.Messages(42) {
		if strings.Contains(m.Visible, "Answered after the takeover.") {
			n++
		}
	}
	if n != 1 || len(model.Requests()) != 2 {
		t.Errorf("after the takeover: %d answers, %d model requests; want 1 and 2 in all", n, len(model.Requests()))
	}
}
