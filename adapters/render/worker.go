package render

import (
	"context"
	"fmt"
	"time"
)

const (
	typingEvery = 4500 * time.Millisecond // Telegram shows "typing" for ~5 s
	finalTries  = 5                       // deliveries of a final draft before giving up
	urgentTries = 8                       // rate-limited retries of urgent calls
)

// work is the worker of one conversation: it runs ops in order and
// flushes dirty drafts when they are due, one platform call at a time. It
// exits when the conversation has nothing left to show.
func (s *Sender) work(c *conv) {
	defer s.workers.Done()
	for {
		s.mu.Lock()
		if s.ctx.Err() != nil {
			c.running = false
			delete(s.convs, c.key)
			s.mu.Unlock()
			return
		}
		if len(c.ops) > 0 {
			o := c.ops[0]
			c.ops = c.ops[1:]
			c.busy = true
			s.mu.Unlock()
			s.safely(c, func() { s.exec(c, o) })
			s.setBusy(c, false)
			continue
		}
		now := time.Now()
		d, due := s.nextDraftLocked(c, now)
		if d != nil && !due.After(now) {
			c.busy = true
			s.mu.Unlock()
			s.safely(c, func() { s.flush(c, d, false) })
			s.setBusy(c, false)
			continue
		}
		pending := d != nil
		if typeDue, ok := s.typingDueLocked(c, now); ok {
			if !typeDue.After(now) {
				c.typedAt = now
				s.mu.Unlock()
				s.sendTyping(c)
				continue
			}
			if !pending || typeDue.Before(due) {
				due, pending = typeDue, true
			}
		}
		if len(c.drafts) == 0 && !pending {
			c.running = false
			delete(s.convs, c.key)
			s.mu.Unlock()
			return
		}
		wait := time.Minute // stale drafts are looked for at least this often
		if pending {
			wait = due.Sub(now)
		}
		s.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-c.wake:
		case <-t.C:
		case <-s.ctx.Done():
		}
		t.Stop()
	}
}

func (s *Sender) setBusy(c *conv, b bool) {
	s.mu.Lock()
	c.busy = b
	s.mu.Unlock()
}

// safely runs f, turning a panic into a logged failure: a rendering bug
// must not take the process (and every run in it) down.
func (s *Sender) safely(c *conv, f func()) {
	defer func() {
		if r := recover(); r != nil {
			s.stats.failures.Add(1)
			s.log.Error("render: panic", "conv", c.key, "panic", fmt.Sprint(r))
		}
	}()
	f()
}

// nextDraftLocked returns the dirty draft due first and when it is due;
// it also closes stale drafts.
func (s *Sender) nextDraftLocked(c *conv, now time.Time) (*draft, time.Time) {
	var best *draft
	var bestDue time.Time
	for _, d := range c.order {
		if d.final {
			continue
		}
		if now.Sub(d.seen) > s.opts.StaleAfter {
			d.active, d.final, d.dirty = false, true, true
			c.ops = append(c.ops, op{kind: opFinal, d: d})
			continue
		}
		if !d.dirty {
			continue
		}
		var due time.Time
		if len(d.msgs) == 0 {
			due = d.first.Add(s.limits.FirstSendDebounce)
		} else {
			// Under pressure from other conversations, edit less often: the
			// text keeps accumulating, so nothing is lost, only coalesced.
			iv := time.Duration(float64(s.limits.MinEditInterval) * (1 + 3*s.lim.Pressure()))
			due = d.lastCall.Add(iv)
		}
		if w := s.lim.Delay(c.rateKey, Low); w > 0 && now.Add(w).After(due) {
			due = now.Add(w)
		}
		if best == nil || due.Before(bestDue) {
			best, bestDue = d, due
		}
	}
	// Forget final drafts whose op has run, keeping order small.
	live := c.order[:0]
	for _, d := range c.order {
		if !d.final || c.drafts[d.run] == d {
			live = append(live, d)
		}
	}
	c.order = live
	return best, bestDue
}

// typingDueLocked reports when the next typing indicator is due, if a run
// is working and its draft has not been touched lately.
func (s *Sender) typingDueLocked(c *conv, now time.Time) (time.Time, bool) {
	if s.typer == nil || !c.typing {
		return time.Time{}, false
	}
	active := false
	for _, d := range c.order {
		if d.active && !d.final {
			active = true
		}
	}
	if !active {
		c.typing = false
		return time.Time{}, false
	}
	due := c.typedAt.Add(typingEvery)
	if t := c.calledAt.Add(typingEvery); t.After(due) {
		due = t
	}
	return due, true
}

func (s *Sender) sendTyping(c *conv) {
	if !s.lim.Allow(c.rateKey, Low) {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	s.stats.typing.Add(1)
	if err := s.typer.Typing(ctx, c.key); err != nil {
		// A rate limit binds every call to the chat, whatever asked for it.
		if kind, e := classify(err); kind == KindRateLimited {
			s.stats.rateLimited.Add(1)
			s.lim.Backoff(c.rateKey, e.RetryAfter, e.Global)
		}
		s.log.Debug("render: typing indicator failed", "conv", c.key, "err", err)
	}
}

func (s *Sender) exec(c *conv, o op) {
	switch o.kind {
	case opFinal:
		s.finish(c, o.d)
	case opSay:
		if _, _, err := s.post(c, Message{Text: o.text}, Urgent, urgentTries); err != nil {
			s.log.Warn("render: notice not delivered", "conv", c.key, "err", err)
		}
	case opCard:
		s.flushBefore(c)
		s.postCard(c, o.approval)
	case opOutcome:
		s.flushBefore(c)
		s.showOutcome(c, o.approval, o.ref)
	case opRestate:
		s.restate(c, o.d)
	}
}

// flushBefore delivers pending draft text before a card, so the chat shows
// things in the order they happened.
func (s *Sender) flushBefore(c *conv) {
	s.mu.Lock()
	var dirty []*draft
	for _, d := range c.order {
		if d.dirty {
			dirty = append(dirty, d) // final ones too: their op comes later
		}
	}
	s.mu.Unlock()
	for _, d := range dirty {
		s.flush(c, d, false)
	}
}

// finish delivers a completed draft completely, then forgets it.
func (s *Sender) finish(c *conv, d *draft) {
	if wait := time.Until(d.lastCall.Add(s.limits.MinEditInterval)); len(d.msgs) > 0 && wait > 0 {
		s.sleep(wait)
	}
	for d.tries < finalTries {
		if s.flush(c, d, true) {
			break
		}
		d.tries++
		s.sleep(time.Duration(d.tries) * time.Second)
	}
	if d.tries == finalTries {
		s.log.Error("render: final answer not delivered", "conv", c.key, "run", d.run)
	}
	s.mu.Lock()
	d.dirty = false
	if c.drafts[d.run] == d {
		delete(c.drafts, d.run)
	}
	s.mu.Unlock()
}

func (s *Sender) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.ctx.Done():
	}
}

// flush brings the draft's messages up to date with its text. It reports
// whether everything was delivered; on false the draft is dirty again.
func (s *Sender) flush(c *conv, d *draft, final bool) bool {
	prio := Low
	tries := 0
	if final {
		prio, tries = Urgent, urgentTries
	}
	// Take the budget before reading the text: a draft that waited behind
	// other conversations then carries everything streamed meanwhile (often
	// the final answer) instead of what it had when it began to wait, which
	// would cost another edit later.
	if err := s.lim.Wait(s.ctx, c.rateKey, prio); err != nil {
		s.mu.Lock()
		d.dirty = true
		s.mu.Unlock()
		return false
	}
	c.prepaid = true
	defer func() { c.prepaid = false }() // unused when nothing had to change

	s.mu.Lock()
	doc := d.compose()
	active := d.active && !d.final
	d.dirty = false
	s.mu.Unlock()

	chunks := Split(doc, s.limits.MaxText)
	ok := true
	calls := d.calls
	for i, text := range chunks {
		want := Message{Text: text}
		if active && i == len(chunks)-1 {
			want.Buttons = []Button{{Label: "⏹ Stop", Data: ButtonData(ActionStop, d.run, s.limits.MaxButtonData), Style: StyleDanger}}
		}
		if !s.deliverChunk(c, d, i, want, prio, tries, final) {
			ok = false
			break
		}
	}
	// The draft got shorter (the final text replaced a longer stream): empty
	// the messages it no longer needs rather than leave stale text.
	for i := len(chunks); ok && i < len(d.msgs); i++ {
		if !s.deliverChunk(c, d, i, Message{Text: "…"}, prio, tries, final) {
			ok = false
		}
	}
	s.mu.Lock()
	if d.calls != calls {
		d.lastCall = time.Now()
		c.calledAt = d.lastCall
	}
	if !ok {
		d.dirty = true
	}
	s.mu.Unlock()
	return ok
}

// deliverChunk makes message i of the draft show want.
func (s *Sender) deliverChunk(c *conv, d *draft, i int, want Message, prio Priority, tries int, final bool) bool {
	if i < len(d.msgs) {
		m := &d.msgs[i]
		want.Plain = m.plain
		switch {
		case m.state == sentOK && m.msg.Equal(want):
			s.stats.skipped.Add(1)
			return true
		case m.state == sentOK:
			d.calls++
			sent, err := s.edit(c, m.ref, want, prio, tries)
			if err == nil {
				m.msg, m.plain = sent, sent.Plain
				return true
			}
			if kind, _ := classify(err); kind == KindRejected {
				// The message is gone (deleted by someone): the final text
				// goes into a new one instead.
				m.state = sentDead
				s.log.Warn("render: draft message rejected an edit", "conv", c.key, "err", err)
				return !final
			}
			s.log.Debug("render: draft edit failed", "conv", c.key, "err", err)
			return false
		case !final:
			// A post that may have happened, or a message that is gone: do
			// not stream into a second copy; the final text is posted once.
			return true
		}
	}
	d.calls++
	ref, sent, err := s.post(c, want, prio, tries)
	if err != nil {
		if kind, _ := classify(err); kind == KindAmbiguous {
			s.log.Warn("render: draft post failed ambiguously; not re-sending while streaming", "conv", c.key, "err", err)
			s.setMsg(d, i, sentMsg{state: sentUnknown, msg: want})
			return final // a final post is never repeated: it may have landed
		}
		s.log.Debug("render: draft post failed", "conv", c.key, "err", err)
		return false
	}
	s.setMsg(d, i, sentMsg{ref: ref, msg: sent, plain: sent.Plain})
	return true
}

func (s *Sender) setMsg(d *draft, i int, m sentMsg) {
	if i < len(d.msgs) {
		d.msgs[i] = m
		return
	}
	d.msgs = append(d.msgs, m)
}
