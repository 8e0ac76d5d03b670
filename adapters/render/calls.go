package render

import "context"

// post sends m as a new message. It is retried only when the platform said
// nothing happened: rate limits (up to tries times) and rejected formatting
// (once, plain). It returns the message as it was finally sent.
func (s *Sender) post(c *conv, m Message, prio Priority, tries int) (MsgRef, Message, error) {
	var ref MsgRef
	err := s.call(c, &m, prio, tries, func(ctx context.Context, m Message) error {
		var err error
		ref, err = s.p.Post(ctx, c.key, m)
		s.stats.posts.Add(1)
		return err
	})
	return ref, m, err
}

// edit changes a message; like post, but edits are idempotent.
func (s *Sender) edit(c *conv, ref MsgRef, m Message, prio Priority, tries int) (Message, error) {
	err := s.call(c, &m, prio, tries, func(ctx context.Context, m Message) error {
		s.stats.edits.Add(1)
		return s.p.Edit(ctx, c.key, ref, m)
	})
	return m, err
}

func (s *Sender) call(c *conv, m *Message, prio Priority, tries int, f func(context.Context, Message) error) error {
	for attempt := 0; ; attempt++ {
		if c.prepaid {
			c.prepaid = false
		} else if err := s.lim.Wait(s.ctx, c.rateKey, prio); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.CallTimeout)
		err := f(ctx, *m)
		cancel()
		if err == nil {
			return nil
		}
		kind, e := classify(err)
		switch {
		case kind == KindFormatting && !m.Plain:
			s.stats.fallbacks.Add(1)
			s.log.Info("render: platform rejected the formatting; sending plain text", "conv", c.key, "err", err)
			m.Plain = true
			continue
		case kind == KindRateLimited:
			s.stats.rateLimited.Add(1)
			s.lim.Backoff(c.rateKey, e.RetryAfter, e.Global)
			if attempt < tries {
				continue
			}
		default:
			s.stats.failures.Add(1)
		}
		return err
	}
}
