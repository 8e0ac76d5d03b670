package chats_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/core"
)

func TestQualify(t *testing.T) {
	for _, c := range []struct{ platform, id, want string }{
		{"telegram", "42", "telegram:42"},
		{"telegram", "telegram:42", "telegram:42"},
		{"slack", "U1", "slack:U1"},
		{"slack", "", ""},
		{"discord", "slack:U1", "discord:slack:U1"},
	} {
		if got := chats.Qualify(c.platform, c.id); got != c.want {
			t.Errorf("Qualify(%q, %q) = %q, want %q", c.platform, c.id, got, c.want)
		}
	}
}

// engine records what it is handed, as *core.Engine would receive it.
type engine struct {
	mu      sync.Mutex
	inbound []core.Inbound
	decided []core.Decision
}

func (e *engine) Handle(_ context.Context, in core.Inbound) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inbound = append(e.inbound, in)
	return nil
}
func (e *engine) Stop(context.Context, string) bool { return false }
func (e *engine) Decide(_ context.Context, d core.Decision) (core.Approval, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.decided = append(e.decided, d)
	return core.Approval{ID: d.ApprovalID, Tool: "secret-tool"}, core.ErrAlreadyDecided
}
func (e *engine) Status(context.Context, string) (core.Status, error) {
	return core.Status{PendingApprovals: []core.Approval{{ID: "a1", Tool: "secret-tool"}}}, nil
}

// keeper is an engine that keeps conversations.
type keeper struct{ engine }

func (*keeper) StartConversation(context.Context, string) error { return nil }
func (*keeper) ConversationKeys(context.Context, string) ([]string, error) {
	return []string{"telegram:1:2:3"}, nil
}

func TestAsQualifiesPeopleAndCountsDecisions(t *testing.T) {
	eng := &engine{}
	var counted []string
	pe := chats.As("telegram", eng, chats.Options{
		Decided: func(platform string, err error) { counted = append(counted, platform+" "+err.Error()) },
	})
	ctx := context.Background()
	_ = pe.Handle(ctx, core.Inbound{ConvKey: "telegram:1:2", User: core.Actor{ID: "42"}})
	_ = pe.Handle(ctx, core.Inbound{ConvKey: "telegram:1:2", User: core.Actor{ID: "telegram:43"}})
	a, err := pe.Decide(ctx, core.Decision{ApprovalID: "a1", Actor: core.Actor{ID: "44"}})
	if !errors.Is(err, core.ErrAlreadyDecided) || a.ID != "a1" {
		t.Errorf("Decide = %+v, %v; want the engine's answer", a, err)
	}
	got := []string{eng.inbound[0].User.ID, eng.inbound[1].User.ID, eng.decided[0].Actor.ID}
	if diff := cmp.Diff([]string{"telegram:42", "telegram:43", "telegram:44"}, got); diff != "" {
		t.Errorf("identities the engine got (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"telegram " + core.ErrAlreadyDecided.Error()}, counted); diff != "" {
		t.Errorf("decisions counted (-want +got):\n%s", diff)
	}
	if _, ok := pe.(chats.Keeper); ok {
		t.Error("As made a Keeper of an engine that keeps no conversations")
	}
	k, ok := chats.As("telegram", &keeper{}, chats.Options{}).(chats.Keeper)
	if !ok {
		t.Fatal("As hid the engine's keeping of conversations")
	}
	if keys, err := k.ConversationKeys(ctx, "telegram:1:2:"); err != nil || len(keys) != 1 {
		t.Errorf("ConversationKeys = %v, %v", keys, err)
	}
}

// chat is an adapter of a platform that shows notify cards and starts
// threads; its events and cards are recorded.
type chat struct {
	platform string
	mu       sync.Mutex
	cards    []string
	run      func(ctx context.Context) error
}

func (c *chat) Platform() string                       { return c.platform }
func (c *chat) Owns(key string) bool                   { return strings.HasPrefix(key, c.platform+":") }
func (c *chat) Send(context.Context, core.Event) error { return nil }
func (c *chat) Close() error                           { return nil }
func (c *chat) Health() (bool, string)                 { return false, "unreachable" }
func (c *chat) Run(ctx context.Context, _ chats.Engine) error {
	if c.run != nil {
		return c.run(ctx)
	}
	<-ctx.Done()
	return nil
}
func (c *chat) Notify(_ context.Context, where string, a core.Approval) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cards = append(c.cards, where+" "+a.ID)
	return nil
}
func (c *chat) StartThread(_ context.Context, where, _, _ string) (string, error) {
	return c.platform + ":" + where + ":1", nil
}
func (c *chat) Lease() string { return c.platform + ":bot" }

func TestNotifyShowsTheCardOnEachTargetsPlatform(t *testing.T) {
	tg := &chat{platform: "telegram"}
	set := chats.NewSet(tg)
	ev := core.Event{Type: core.EventToolAwaitingApproval, ConvKey: "slack:T:C:1",
		Approval: &core.Approval{ID: "a1", Verdict: core.Verdict{Notify: []string{"telegram:123", "discord:9"}}}}
	err := set.Notify(context.Background(), ev)
	if err == nil || !strings.Contains(err.Error(), "notify discord:9: discord is not enabled") {
		t.Errorf("Notify = %v, want the target on a platform not enabled reported", err)
	}
	if diff := cmp.Diff([]string{"123 a1"}, tg.cards); diff != "" {
		t.Errorf("cards (-want +got):\n%s", diff)
	}
	ev.Type = core.EventToolResult
	if err := set.Notify(context.Background(), ev); err != nil || len(tg.cards) != 1 {
		t.Errorf("Notify of a tool result = %v, %d cards; want it ignored", err, len(tg.cards))
	}
}

func TestCheckTargetNamesPlatformsThatCannotThread(t *testing.T) {
	set := chats.NewSet(&chat{platform: "slack"})
	set.Route(chats.LogChat(slog.New(slog.DiscardHandler)))
	for target, want := range map[string]string{"log": "", "slack:C1": "", "telegram:1": "telegram is not enabled", "log:x": "log is not enabled"} {
		err := set.CheckTarget(target)
		if (want == "") != (err == nil) || err != nil && err.Error() != want {
			t.Errorf("CheckTarget(%q) = %v, want %q", target, err, want)
		}
	}
}

// leaser holds every lease for another replica.
type leaser struct{}

func (leaser) TryLease(context.Context, string) (core.Lease, bool, error) { return nil, false, nil }

func TestStandbyIsReadyWhileAnotherReplicaHoldsTheLease(t *testing.T) {
	ran := make(chan struct{}, 1)
	c := &chat{platform: "telegram", run: func(ctx context.Context) error { ran <- struct{}{}; <-ctx.Done(); return nil }}
	set := chats.NewSet(c)
	set.Leaser = leaser{}
	if h := set.Health(); h[0].OK {
		t.Fatalf("before Run: %+v, want the adapter's own health", h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { set.Run(ctx, &engine{}, make(chan error, 1)); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for !set.Health()[0].OK {
		if time.Now().After(deadline) {
			t.Fatalf("health %+v, want a ready standby", set.Health())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if h := set.Health()[0]; h.Detail != "standby: another replica holds the telegram:bot lease" {
		t.Errorf("standby detail %q", h.Detail)
	}
	cancel()
	<-done
	select {
	case <-ran:
		t.Error("the adapter ran without its lease")
	default:
	}
}
