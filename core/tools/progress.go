package tools

import (
	"sync"

	"github.com/opsgate/opsgate/core"
)

// progressSink forwards one call's progress notifications to its callback
// until the call returns: stop waits for a delivery in progress, so the
// callback never runs after Call has returned.
type progressSink struct {
	mu   sync.Mutex
	fn   func(core.Progress)
	done bool
}

func (s *progressSink) send(p core.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.fn(p)
	}
}

func (s *progressSink) stop() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}
