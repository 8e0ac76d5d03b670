// Package rendertest holds the sender conformance suite that every chat
// adapter runs against its own platform fake ([Run]), helpers that build
// the events of a run ([Script]), and an in-memory recording
// render.Platform ([Platform]) for tests of render itself.
package rendertest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
)

// Platform is an in-memory chat platform: it keeps the messages of every
// conversation as a reader would see them and records every call. Failures
// can be scripted with FailNext. It is safe for concurrent use.
type Platform struct {
	limits render.Limits

	mu    sync.Mutex
	next  int
	msgs  map[string][]*stored
	calls []Call
	fails []scripted
	// rejectFormat makes formatted (non-plain) texts matching it fail.
	rejectFormat func(text string) bool
}

type stored struct {
	ref render.MsgRef
	msg render.Message
}

type scripted struct {
	method string
	err    error
}

// Call is one recorded call.
type Call struct {
	Method string // "post", "edit" or "typing"
	Conv   string
	Ref    render.MsgRef
	Msg    render.Message
	Time   time.Time
	Err    error
}

var _ render.Platform = (*Platform)(nil)
var _ render.Typer = (*Platform)(nil)

// NewPlatform returns an empty platform with the given limits.
func NewPlatform(l render.Limits) *Platform {
	return &Platform{limits: l, msgs: map[string][]*stored{}}
}

// FailNext makes the next call of method ("post", "edit", "typing") fail
// with err, without effect.
func (p *Platform) FailNext(method string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fails = append(p.fails, scripted{method, err})
}

// RejectFormatting makes every formatted text for which f is true fail
// with render.FormattingRejected, as Telegram does with bad entities.
func (p *Platform) RejectFormatting(f func(text string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rejectFormat = f
}

// Limits implements render.Platform.
func (p *Platform) Limits() render.Limits { return p.limits }

// Post implements render.Platform.
func (p *Platform) Post(ctx context.Context, conv string, m render.Message) (render.MsgRef, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.failLocked("post", conv, "", m); err != nil {
		return "", err
	}
	p.next++
	ref := render.MsgRef(strconv.Itoa(p.next))
	p.msgs[conv] = append(p.msgs[conv], &stored{ref: ref, msg: m})
	p.calls = append(p.calls, Call{Method: "post", Conv: conv, Ref: ref, Msg: m, Time: time.Now()})
	return ref, nil
}

// Edit implements render.Platform.
func (p *Platform) Edit(ctx context.Context, conv string, ref render.MsgRef, m render.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.failLocked("edit", conv, ref, m); err != nil {
		return err
	}
	for _, s := range p.msgs[conv] {
		if s.ref == ref {
			s.msg = m
			p.calls = append(p.calls, Call{Method: "edit", Conv: conv, Ref: ref, Msg: m, Time: time.Now()})
			return nil
		}
	}
	err := render.Rejected(errors.New("message to edit not found"))
	p.calls = append(p.calls, Call{Method: "edit", Conv: conv, Ref: ref, Msg: m, Time: time.Now(), Err: err})
	return err
}

// Typing implements render.Typer.
func (p *Platform) Typing(ctx context.Context, conv string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.failLocked("typing", conv, "", render.Message{}); err != nil {
		return err
	}
	p.calls = append(p.calls, Call{Method: "typing", Conv: conv, Time: time.Now()})
	return nil
}

func (p *Platform) failLocked(method, conv string, ref render.MsgRef, m render.Message) error {
	var err error
	for i, f := range p.fails {
		if f.method == method {
			err = f.err
			p.fails = append(p.fails[:i], p.fails[i+1:]...)
			break
		}
	}
	if err == nil && method != "typing" && !m.Plain && p.rejectFormat != nil && p.rejectFormat(m.Text) {
		err = render.FormattingRejected(errors.New("can't parse entities"))
	}
	if err != nil {
		p.calls = append(p.calls, Call{Method: method, Conv: conv, Ref: ref, Msg: m, Time: time.Now(), Err: err})
	}
	return err
}

// Messages returns the messages of conv as a reader sees them, oldest first.
func (p *Platform) Messages(conv string) []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Message
	for _, s := range p.msgs[conv] {
		text := s.msg.Text
		if !s.msg.Plain {
			text = render.PlainText(text)
		}
		out = append(out, Message{ID: string(s.ref), Text: text, Buttons: append([]render.Button(nil), s.msg.Buttons...)})
	}
	return out
}

// Calls returns every call so far, failed ones included.
func (p *Platform) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// Count returns the successful posts and edits for conv.
func (p *Platform) Count(conv string) Calls {
	var c Calls
	for _, call := range p.Calls() {
		if call.Conv != conv || call.Err != nil {
			continue
		}
		switch call.Method {
		case "post":
			c.Posts++
		case "edit":
			c.Edits++
		}
	}
	return c
}
