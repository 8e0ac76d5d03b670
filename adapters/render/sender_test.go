package render_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
)

var fastLimits = render.Limits{MaxText: 400, MinEditInterval: 30 * time.Millisecond, FirstSendDebounce: 10 * time.Millisecond, MaxButtonData: 64}

func newSender(t *testing.T, l render.Limits) (*render.Sender, *rendertest.Platform) {
	p := rendertest.NewPlatform(l)
	s := render.New(p, render.Options{Logger: coretest.Logger(t), Limiter: render.NewLimiter(render.LimiterConfig{Rate: 1000})})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, p
}

func TestConformanceInMemory(t *testing.T) {
	rendertest.Run(t, func(t *testing.T) rendertest.Env {
		s, p := newSender(t, fastLimits)
		n := 0
		return rendertest.Env{
			Sender:   s,
			NewConv:  func() string { n++; return fmt.Sprintf("mem:bot:%d", n) },
			Flush:    s.Flush,
			Messages: p.Messages,
			Calls: func(conv string) rendertest.Calls {
				return p.Count(conv)
			},
			Limits: fastLimits,
		}
	})
}

func send(t *testing.T, s *render.Sender, evs ...core.Event) {
	t.Helper()
	for _, ev := range evs {
		if err := s.Send(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
}

func flush(t *testing.T, s *render.Sender) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestFormattingRejectedIsResentPlain(t *testing.T) {
	s, p := newSender(t, fastLimits)
	p.RejectFormatting(func(text string) bool { return strings.Contains(text, "<") })
	sc := rendertest.NewScript("mem:bot:1", "r1")
	answer := "if a < b && c > d then **bold"
	send(t, s, sc.Text(core.EventToken, answer), sc.Completed(core.RunDone, answer))
	flush(t, s)
	msgs := p.Messages("mem:bot:1")
	if len(msgs) != 1 || msgs[0].Text != answer {
		t.Fatalf("messages = %+v, want the raw answer as plain text", msgs)
	}
	if st := s.Stats(); st.FormatFallbacks != 1 || st.Posts != 2 {
		t.Errorf("stats = %+v, want one fallback after one rejected post", st)
	}
}

func TestRateLimitedPostWaitsAndIsNotDuplicated(t *testing.T) {
	s, p := newSender(t, fastLimits)
	p.FailNext("post", render.RateLimited(300*time.Millisecond, false, errors.New("429")))
	sc := rendertest.NewScript("mem:bot:1", "r1")
	send(t, s, sc.Text(core.EventToken, "hello"), sc.Completed(core.RunDone, "hello there"))
	flush(t, s)
	calls := p.Calls()
	var posts []rendertest.Call
	for _, c := range calls {
		if c.Method == "post" {
			posts = append(posts, c)
		}
	}
	if len(posts) != 2 || posts[0].Err == nil || posts[1].Err != nil {
		t.Fatalf("posts = %+v, want one rate-limited and one successful", posts)
	}
	if gap := posts[1].Time.Sub(posts[0].Time); gap < 300*time.Millisecond {
		t.Errorf("retried after %s, want at least the retry-after of 300ms", gap)
	}
	if msgs := p.Messages("mem:bot:1"); len(msgs) != 1 || msgs[0].Text != "hello there" {
		t.Errorf("messages = %+v", msgs)
	}
}

func TestAmbiguousPostIsNotRepeated(t *testing.T) {
	s, p := newSender(t, fastLimits)
	p.FailNext("post", errors.New("read tcp: i/o timeout"))
	sc := rendertest.NewScript("mem:bot:1", "r1")
	send(t, s, sc.Event(core.EventGenerationStart), sc.Text(core.EventToken, "partial"))
	flush(t, s)
	send(t, s, sc.Text(core.EventToken, " and more"))
	flush(t, s)
	if n := p.Count("mem:bot:1").Posts; n != 0 {
		t.Fatalf("a draft was re-posted while streaming after an ambiguous failure (%d posts)", n)
	}
	send(t, s, sc.Completed(core.RunDone, "partial and more"))
	flush(t, s)
	if msgs := p.Messages("mem:bot:1"); len(msgs) != 1 || msgs[0].Text != "partial and more" {
		t.Errorf("the final text must still arrive, once: %+v", msgs)
	}
}

func TestDeletedDraftGetsFinalInNewMessage(t *testing.T) {
	s, p := newSender(t, fastLimits)
	sc := rendertest.NewScript("mem:bot:1", "r1")
	send(t, s, sc.Event(core.EventGenerationStart), sc.Text(core.EventToken, "draft"))
	flush(t, s)
	p.FailNext("edit", render.Rejected(errors.New("message to edit not found")))
	send(t, s, sc.Completed(core.RunDone, "final answer"))
	flush(t, s)
	msgs := p.Messages("mem:bot:1")
	if len(msgs) != 2 || msgs[1].Text != "final answer" {
		t.Errorf("messages = %+v, want the final answer in a new message", msgs)
	}
}

func TestResolveEditsCardPostedElsewhere(t *testing.T) {
	s, p := newSender(t, fastLimits)
	conv := "mem:bot:1"
	// A card this sender never posted (another process, before a restart).
	ref, err := p.Post(context.Background(), conv, render.Message{Text: "old card", Buttons: []render.Button{{Label: "Approve", Data: "a:x"}}})
	if err != nil {
		t.Fatal(err)
	}
	a := rendertest.NewApproval(conv, "r1", fmt.Sprintf("%032x", 7))
	a.Status, a.DecidedBy = core.ApprovalApproved, core.Actor{ID: "1", Name: "@carol"}
	s.Resolve(a, ref)
	flush(t, s)
	msgs := p.Messages(conv)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "Approved by @carol") || len(msgs[0].Buttons) != 0 {
		t.Errorf("card = %+v, want the outcome without buttons", msgs)
	}
	// The event that follows the decision changes nothing more.
	sc := rendertest.NewScript(conv, "r1")
	send(t, s, sc.Approval(core.EventToolApproved, a))
	flush(t, s)
	if c := p.Count(conv); c.Edits != 1 {
		t.Errorf("edits = %d, want 1", c.Edits)
	}
}

func TestOutcomeOfUnknownCardIsPosted(t *testing.T) {
	s, p := newSender(t, fastLimits)
	conv := "mem:bot:1"
	a := rendertest.NewApproval(conv, "r1", fmt.Sprintf("%032x", 8))
	a.Status = core.ApprovalExpired
	sc := rendertest.NewScript(conv, "r1")
	send(t, s, sc.Approval(core.EventToolDenied, a), sc.Completed(core.RunDone, "Not scaled."))
	flush(t, s)
	msgs := p.Messages(conv)
	if len(msgs) != 2 || !strings.Contains(msgs[0].Text, "expired") {
		t.Errorf("messages = %+v, want an expiry notice", msgs)
	}
}

func TestTypingWhileWorking(t *testing.T) {
	s, p := newSender(t, fastLimits)
	sc := rendertest.NewScript("mem:bot:1", "r1")
	send(t, s, sc.Event(core.EventReady), sc.Event(core.EventGenerationStart))
	flush(t, s)
	deadline := time.Now().Add(5 * time.Second)
	for !hasCall(p, "typing") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !hasCall(p, "typing") {
		t.Fatal("no typing indicator while the model works")
	}
	p.FailNext("typing", errors.New("boom"))
	send(t, s, sc.Text(core.EventToken, "hi"), sc.Completed(core.RunDone, "hi"))
	flush(t, s)
	if msgs := p.Messages("mem:bot:1"); len(msgs) != 1 || msgs[0].Text != "hi" {
		t.Errorf("messages = %+v", msgs)
	}
}

func hasCall(p *rendertest.Platform, method string) bool {
	for _, c := range p.Calls() {
		if c.Method == method && c.Err == nil {
			return true
		}
	}
	return false
}

func TestSendNeverBlocks(t *testing.T) {
	p := rendertest.NewPlatform(render.Limits{MaxText: 400, MinEditInterval: time.Hour, FirstSendDebounce: time.Hour})
	s := render.New(p, render.Options{Logger: coretest.Logger(t)})
	defer func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // drafts debounced for an hour are not waited for
		_ = s.Close(ctx)
	}()
	sc := rendertest.NewScript("mem:bot:1", "r1")
	start := time.Now()
	for range 10000 {
		if err := s.Send(context.Background(), sc.Text(core.EventToken, "x")); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("10,000 token events took %s; Send must not wait for the platform", d)
	}
}

func TestSendAfterClose(t *testing.T) {
	p := rendertest.NewPlatform(fastLimits)
	s := render.New(p, render.Options{Logger: coretest.Logger(t)})
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(context.Background(), core.Event{Type: core.EventToken, ConvKey: "c", Text: "x"}); !errors.Is(err, render.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
}

// A typing indicator that is rate limited binds the chat like any call: the
// answer waits out the retry-after instead of drawing another 429.
func TestRateLimitedTypingHoldsBackTheNextCall(t *testing.T) {
	s, p := newSender(t, fastLimits)
	p.FailNext("typing", render.RateLimited(400*time.Millisecond, false, errors.New("429")))
	sc := rendertest.NewScript("mem:bot:1", "r1")
	send(t, s, sc.Event(core.EventReady), sc.Event(core.EventGenerationStart))
	deadline := time.Now().Add(5 * time.Second)
	var limited time.Time
	for limited.IsZero() && time.Now().Before(deadline) {
		for _, c := range p.Calls() {
			if c.Method == "typing" && c.Err != nil {
				limited = c.Time
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	if limited.IsZero() {
		t.Fatal("no typing indicator was sent")
	}
	send(t, s, sc.Text(core.EventToken, "hi"), sc.Completed(core.RunDone, "hi"))
	flush(t, s)
	for _, c := range p.Calls() {
		if c.Method == "post" && c.Time.Sub(limited) < 400*time.Millisecond {
			t.Fatalf("posted %s after a typing indicator got retry-after 400ms", c.Time.Sub(limited))
		}
	}
	if msgs := p.Messages("mem:bot:1"); len(msgs) != 1 || msgs[0].Text != "hi" {
		t.Errorf("messages = %+v", msgs)
	}
}
