package postgres

import (
	"time"

	"github.com/opsgate/opsgate/core"
)

// Crash stops c as its process's death would: its lock and heartbeat end,
// its holds stay behind to lapse.
func Crash(c core.Coordinator) {
	k := c.(*Coordinator)
	k.cancel()
	k.done.Wait()
	k.stopLive()
	k.liveDone.Wait()
}

// SetRetry sets how long s's operations wait for an unreachable server.
func SetRetry(s *Store, d time.Duration) { s.retryFor = d }
