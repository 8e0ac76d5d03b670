package render

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Options tune a Sender. The zero value of every field means its default.
type Options struct {
	// Limiter is the budget of the bot token; share one between every
	// Sender (and schedule) that posts with the same token.
	Limiter *Limiter
	Logger  *slog.Logger
	// CallTimeout bounds one platform call (default 30 s).
	CallTimeout time.Duration
	// StaleAfter closes a draft whose run sent nothing for this long, so a
	// run that died without `completed` does not keep a Stop button and a
	// typing indicator forever (default 15 min).
	StaleAfter time.Duration
}

// Sender renders runs into a chat platform. It implements core.EventSender;
// see the package documentation for what it shows. It is safe for
// concurrent use.
type Sender struct {
	p      Platform
	limits Limits
	typer  Typer
	keyer  RateKeyer
	lim    *Limiter
	log    *slog.Logger
	opts   Options

	ctx    context.Context // the lifetime of platform calls; ends at Close
	cancel context.CancelFunc

	mu    sync.Mutex
	convs map[string]*conv
	cards map[string]*card // by approval id
	// asked are the approvals whose card was queued, by id: a request
	// announced again (a vote, its preview arriving) updates its card and
	// is no new step of its run.
	asked   map[string]struct{}
	paused  map[string]*draft // drafts of runs paused for approval, by run id
	closed  bool
	workers sync.WaitGroup

	stats stats
}

var _ core.EventSender = (*Sender)(nil)

// ErrClosed is returned by Send after Close.
var ErrClosed = errors.New("render: sender closed")

// New returns a Sender over p. It starts nothing until events arrive.
func New(p Platform, o Options) *Sender {
	if o.Limiter == nil {
		o.Limiter = NewLimiter(LimiterConfig{})
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 30 * time.Second
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = 15 * time.Minute
	}
	l := p.Limits()
	if l.MaxText <= 0 {
		l.MaxText = 4000
	}
	if l.MaxButtonData <= 0 {
		l.MaxButtonData = 64
	}
	s := &Sender{
		p: p, limits: l, lim: o.Limiter, log: o.Logger.With("component", "render"), opts: o,
		convs: map[string]*conv{}, cards: map[string]*card{}, paused: map[string]*draft{},
		asked: map[string]struct{}{},
	}
	s.typer, _ = p.(Typer)
	s.keyer, _ = p.(RateKeyer)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// conv is the state of one conversation; its worker is the only goroutine
// that calls the platform for it. Guarded by Sender.mu.
type conv struct {
	key, rateKey string
	drafts       map[string]*draft // the current draft of each run
	order        []*draft          // drafts in the order they started
	ops          []op
	wake         chan struct{}
	running      bool
	busy         bool
	typing       bool      // a run is working: keep the indicator up
	typedAt      time.Time // last typing indicator
	calledAt     time.Time // last draft call
	// prepaid: the worker took the budget for its next call already (see
	// flush). Only the conversation's worker touches it.
	prepaid bool
}

// card is an approval card as the platform has it.
type card struct {
	conv     string
	ref      MsgRef
	msg      Message
	known    bool // msg is what the platform shows
	resolved time.Time
}

type opKind int

const (
	opCard    opKind = iota // post a new approval card
	opOutcome               // show a decision on its card
	opFinal                 // deliver a completed draft, then forget it
	opSay                   // post a notice
	opRestate               // edit a paused draft after its run went on
)

type op struct {
	kind     opKind
	approval core.Approval
	ref      MsgRef // opOutcome from a click: the card's message
	d        *draft
	text     string
}

// maxAsked bounds Sender.asked.
const maxAsked = 4096

// Send updates the conversation for ev and returns at once; the platform
// calls happen in the conversation's worker. It fails only after Close.
func (s *Sender) Send(_ context.Context, ev core.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if !shown(ev.Type) {
		return nil
	}
	c := s.convLocked(ev.ConvKey)
	if a := ev.Approval; a != nil && a.Verdict.Proposal {
		// A proposal (memory promotion) is a card of its own; its run may
		// have ended long before the decision.
		switch ev.Type {
		case core.EventMemoryPromotionProposed, core.EventToolAwaitingApproval:
			c.ops = append(c.ops, op{kind: opCard, approval: *a})
		case core.EventToolApproved, core.EventToolDenied:
			c.ops = append(c.ops, op{kind: opOutcome, approval: *a})
		}
		s.wakeLocked(c)
		return nil
	}
	if a := ev.Approval; a != nil && ev.Type == core.EventToolAwaitingApproval {
		if _, again := s.asked[a.ID]; again {
			c.ops = append(c.ops, op{kind: opCard, approval: *a})
			s.wakeLocked(c)
			return nil
		}
		if len(s.asked) >= maxAsked {
			clear(s.asked) // a card queued long ago is edited as a new step at worst
		}
		s.asked[a.ID] = struct{}{}
	}
	d := c.drafts[ev.RunID]
	if ev.Type == core.EventToolAwaitingApproval && ev.Approval != nil && len(ev.Approval.Votes) > 0 && (d == nil || d.final) {
		// A vote short of the quorum, sent after the run paused: the card
		// shows the votes; the run's messages stay as they are.
		c.ops = append(c.ops, op{kind: opCard, approval: *ev.Approval})
		s.wakeLocked(c)
		return nil
	}
	if d == nil || d.final {
		// A run paused for approval resumes with the same id: it continues
		// in a new draft, under the card that was decided.
		d = newDraft(ev.RunID)
		d.origin = s.takePausedLocked(ev.RunID)
		c.drafts[ev.RunID] = d
		c.order = append(c.order, d)
	}
	now := time.Now()
	d.seen = now
	if d.apply(ev) {
		d.dirty = true
		if d.first.IsZero() {
			d.first = now
		}
	}
	switch ev.Type {
	case core.EventReady, core.EventGenerationStart, core.EventToolExecuting:
		c.typing = true
	case core.EventToolAwaitingApproval:
		if ev.Approval != nil {
			c.ops = append(c.ops, op{kind: opCard, approval: *ev.Approval})
		}
	case core.EventToolApproved, core.EventToolDenied:
		if ev.Approval != nil {
			c.ops = append(c.ops, op{kind: opOutcome, approval: *ev.Approval})
			delete(s.asked, ev.Approval.ID)
		}
	case core.EventCompleted:
		c.ops = append(c.ops, op{kind: opFinal, d: d})
		if ev.Status == core.RunAwaitingApproval {
			s.rememberPausedLocked(d, now)
		}
	}
	// After the run's own message, so that a final answer goes out first.
	if p := d.origin; p != nil && p.follow(ev) {
		c.ops = append(c.ops, op{kind: opRestate, d: p})
	}
	s.wakeLocked(c)
	return nil
}

// shown reports whether events of type t change what a chat shows.
func shown(t core.EventType) bool {
	switch t {
	case core.EventReady, core.EventGenerationStart, core.EventToken, core.EventGenerationComplete,
		core.EventToolAwaitingApproval, core.EventToolApproved, core.EventToolDenied,
		core.EventToolExecuting, core.EventToolProgress, core.EventToolResult, core.EventToolError,
		core.EventRateLimit, core.EventTransientError, core.EventWorkflowError, core.EventCompleted,
		core.EventMemoryContextLoaded, core.EventMemoryPromotionProposed:
		return true
	}
	return false
}

// Say posts a notice (a command's answer, a refusal) to a conversation,
// in order with its runs' messages and under the same rate limits.
func (s *Sender) Say(conv, markdown string) {
	s.enqueue(conv, op{kind: opSay, text: markdown})
}

// Resolve shows a decided approval on its card, which is the message ref
// of conv a.ConvKey (the message whose button was clicked). Adapters call
// it after a decision so the card is right at once, even for a card posted
// before a restart; the tool.approved/tool.denied event that follows
// changes nothing more.
func (s *Sender) Resolve(a core.Approval, ref MsgRef) {
	if a.ID == "" || a.Status == core.ApprovalPending || a.Status == "" {
		return
	}
	// The card may be a notify card in another conversation than the
	// request's (see Card): edit it where it is.
	key := a.ConvKey
	s.mu.Lock()
	if cd := s.cards[a.ID]; cd != nil && cd.conv != "" {
		key = cd.conv
	}
	s.mu.Unlock()
	s.enqueue(key, op{kind: opOutcome, approval: a, ref: ref})
}

// Card shows approval a in the conversation convKey as a card of its own,
// outside any run's messages: a policy's notify targets (docs/design.md §11) get
// the request's card with working buttons while it is pending (updated
// with its votes), and its outcome once decided. A decision on any card
// counts; every card shows it.
func (s *Sender) Card(convKey string, a core.Approval) {
	kind := opCard
	if a.Status != core.ApprovalPending && a.Status != "" {
		kind = opOutcome
	}
	s.enqueue(convKey, op{kind: kind, approval: a})
}

func (s *Sender) enqueue(key string, o op) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	c := s.convLocked(key)
	c.ops = append(c.ops, o)
	s.wakeLocked(c)
}

func (s *Sender) convLocked(key string) *conv {
	c := s.convs[key]
	if c == nil {
		rk := key
		if s.keyer != nil {
			rk = s.keyer.RateKey(key)
		}
		c = &conv{key: key, rateKey: rk, drafts: map[string]*draft{}, wake: make(chan struct{}, 1)}
		s.convs[key] = c
	}
	return c
}

func (s *Sender) wakeLocked(c *conv) {
	if !c.running {
		c.running = true
		s.workers.Add(1)
		go s.work(c)
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Flush waits until everything sent so far is delivered (or given up on),
// or ctx ends. Drafts waiting for their debounce are delivered first.
func (s *Sender) Flush(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		if s.idle() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (s *Sender) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.convs {
		if len(c.ops) > 0 || c.busy {
			return false
		}
		for _, d := range c.order {
			if d.dirty {
				return false
			}
		}
	}
	return true
}

// Close delivers what is pending (until ctx ends), then stops the workers.
// Send fails afterwards.
func (s *Sender) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	err := s.Flush(ctx)
	s.cancel()
	done := make(chan struct{})
	go func() { s.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	return err
}

// Stats counts platform calls and failures since New.
type Stats struct {
	Posts, Edits, Typing int64
	RateLimited          int64 // calls answered with a rate limit
	FormatFallbacks      int64 // texts re-sent plain
	Failures             int64 // calls that failed otherwise
	Skipped              int64 // edits skipped because nothing changed
}

type stats struct {
	posts, edits, typing, rateLimited, fallbacks, failures, skipped atomic.Int64
}

// Stats returns the counters.
func (s *Sender) Stats() Stats {
	return Stats{
		Posts: s.stats.posts.Load(), Edits: s.stats.edits.Load(), Typing: s.stats.typing.Load(),
		RateLimited: s.stats.rateLimited.Load(), FormatFallbacks: s.stats.fallbacks.Load(),
		Failures: s.stats.failures.Load(), Skipped: s.stats.skipped.Load(),
	}
}
