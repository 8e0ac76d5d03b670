package core_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/coretest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// memCoordinator is a Coordinator over holders kept in memory: a
// conversation is held by one engine name at a time, as the PostgreSQL
// coordinator's claims are. It serves one engine: no signal is ever
// delivered to another.
type memCoordinator struct {
	name string
	mu   sync.Mutex
	held map[string]string // conversation -> holder
	sigs chan core.Signal
	// beforeRelease and onClaim, when set, run at each Release before it
	// takes effect and at each Claim.
	beforeRelease func(convKey string)
	onClaim       func(convKey string)
}

func newMemCoordinator(name string) *memCoordinator {
	return &memCoordinator{name: name, held: map[string]string{}, sigs: make(chan core.Signal)}
}

func (c *memCoordinator) Claim(_ context.Context, key string) (bool, error) {
	if c.onClaim != nil {
		c.onClaim(key)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if h := c.held[key]; h != "" && h != c.name {
		return false, nil
	}
	c.held[key] = c.name
	return true, nil
}

func (c *memCoordinator) Release(_ context.Context, key string) {
	if c.beforeRelease != nil {
		c.beforeRelease(key)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[key] == c.name {
		delete(c.held, key)
	}
}

func (c *memCoordinator) Signal(context.Context, core.Signal) (bool, error) { return false, nil }
func (c *memCoordinator) Signals() <-chan core.Signal                       { return c.sigs }

func (c *memCoordinator) holder(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[key]
}

// releaseGate holds the first Release of conv after arm at the
// coordinator until let go, and notes every Claim.
type releaseGate struct {
	armed            atomic.Bool
	releasing, letGo chan struct{}
	claimed          chan struct{}
}

func gateReleases(c *memCoordinator) *releaseGate {
	g := &releaseGate{releasing: make(chan struct{}, 1), letGo: make(chan struct{}), claimed: make(chan struct{}, 16)}
	c.beforeRelease = func(key string) {
		if key == conv && g.armed.CompareAndSwap(true, false) {
			g.releasing <- struct{}{}
			<-g.letGo
		}
	}
	c.onClaim = func(string) { g.claimed <- struct{}{} }
	return g
}

func (g *releaseGate) arm() { g.armed.Store(true) }

// held waits until the armed release is being held.
func (g *releaseGate) held(t *testing.T) {
	t.Helper()
	select {
	case <-g.releasing:
	case <-time.After(10 * time.Second):
		t.Fatal("the conversation was never released")
	}
	for len(g.claimed) > 0 {
		<-g.claimed
	}
}

// letGoAfterAClaim lets the release go once a claim was made meanwhile:
// an engine that claims while the release is under way claims at once,
// one that waits for the release does not claim before it is let go.
func (g *releaseGate) letGoAfterAClaim() {
	select {
	case <-g.claimed:
	case <-time.After(300 * time.Millisecond):
	}
	close(g.letGo)
}

// A conversation whose run just ended is being released when its next
// message arrives: the release must not land after the new message's claim,
// or the new run would go on in a conversation no engine holds, and another
// replica's sweep would run the same stored message again. The release is
// held at the coordinator while the message arrives; once it is let go,
// the new run's conversation is still held here.
func TestAReleaseNeverLandsAfterTheNextMessagesClaim(t *testing.T) {
	c := newMemCoordinator("e1")
	g := gateReleases(c)
	h := newHarness(t, withCoordinator(c))

	h.llm.Push(llmfake.Reply{Text: "first answer"})
	g.arm()
	h.say("first")
	g.held(t)

	hold := make(chan struct{})
	h.llm.Push(llmfake.Reply{Text: "second answer", Hold: hold})
	g.claimWhileReleasing(t, h, c, hold, "the second message's run", func() error {
		return h.eng.Handle(context.Background(), core.Inbound{ConvKey: conv, MessageID: "m-second", User: alice, Text: "second"})
	})
}

// claimWhileReleasing does act, which claims conv, while the release g
// holds is under way, and lets the release go once act has claimed. The
// run act starts (what) must then ask the model, with conv still held by
// e1; hold holds the model's answer to it until then.
func (g *releaseGate) claimWhileReleasing(t *testing.T, h *harness, c *memCoordinator, hold chan struct{}, what string, act func() error) {
	t.Helper()
	acted := make(chan error, 1)
	go func() { acted <- act() }()
	g.letGoAfterAClaim()
	if err := <-acted; err != nil {
		t.Fatal(err)
	}
	if reqs := h.llm.WaitRequests(2, 10*time.Second); len(reqs) < 2 {
		t.Fatalf("%s never asked the model", what)
	}
	if got := c.holder(conv); got != "e1" {
		t.Errorf("while %s goes on, the conversation is held by %q; want e1", what, got)
	}
	close(hold)
	h.rec.Wait(t, 10*time.Second, 2, coretest.Of(core.EventCompleted))
}

// The same for a paused run resumed at once: the approval is decided while
// the pause's release is under way, and the resumed run goes on in a
// conversation this engine still holds (round 3's fault suite caught the
// interleaving under load, TestFaultSigtermMidToolCall; this is it,
// forced).
func TestAReleaseNeverLandsAfterAResumesClaim(t *testing.T) {
	c := newMemCoordinator("e1")
	g := gateReleases(c)
	h := newHarness(t, withCoordinator(c))
	h.loadWriteTools()
	hold := make(chan struct{})
	h.llm.Push(toolCalls(call("c1", "scale_deployment", `{"name":"web","replicas":3}`)),
		llmfake.Reply{Text: "web now has 3 replicas.", Hold: hold})
	g.arm()
	h.say("scale web to 3")
	a := h.pausedApproval(h.rec, 1)
	g.held(t)

	g.claimWhileReleasing(t, h, c, hold, "the resumed run", func() error {
		_, err := h.decide(a.ID, alice, true, "")
		return err
	})
	if n := len(h.k8s.Calls()); n != 1 {
		t.Errorf("the approved call ran %d times; want once", n)
	}
}
