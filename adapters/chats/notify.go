package chats

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/opsgate/opsgate/core"
)

// HasNotifyCard reports whether ev is an approval event with notify
// targets: a policy rule's "telegram:12345678" (docs/design.md §11).
func HasNotifyCard(ev core.Event) bool {
	switch {
	case ev.Approval == nil || len(ev.Approval.Verdict.Notify) == 0:
		return false
	case ev.Type != core.EventToolAwaitingApproval && ev.Type != core.EventToolApproved && ev.Type != core.EventToolDenied:
		return false
	}
	return true
}

// Notify shows the approval of ev at its notify targets, as a card of its
// own on each ([Notifier]): posted while it waits, updated with each vote,
// and showing the outcome. Any other event is ignored. A target on a
// platform that is not enabled is an error.
func (s *Set) Notify(ctx context.Context, ev core.Event) error {
	if !HasNotifyCard(ev) {
		return nil
	}
	var errs []error
	for _, target := range ev.Approval.Verdict.Notify {
		platform, where, _ := strings.Cut(target, ":")
		n, ok := s.named(platform).(Notifier)
		if !ok {
			errs = append(errs, fmt.Errorf("serve: notify %s: %s is not enabled", target, platform))
			continue
		}
		if err := n.Notify(ctx, where, *ev.Approval); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
