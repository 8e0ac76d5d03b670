package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// takeoverMax is the docs/design.md §12 bound on a poller takeover.
const takeoverMax = 15 * time.Second

// Takeover is figure 9: two `opsgate serve` replicas of the real binary on
// one throw-away PostgreSQL with the Telegram adapter; kill -9 of the one
// that polls, and the time until the other polls, over kills.
func Takeover(ctx context.Context, bin *binary, kills int) ([]Row, error) {
	r, err := newPGReplicas(ctx, bin)
	if err != nil {
		return nil, err
	}
	defer r.close()
	path := r.path
	cfg, err := r.config([]int64{42})
	if err != nil {
		return nil, err
	}

	var took []time.Duration
	standby, err := startServe(path, cfg)
	if err != nil {
		return nil, err
	}
	defer func() { standby.kill() }()
	if err := waitLine(standby, "receiving updates by long polling", 30*time.Second); err != nil {
		return nil, err
	}
	for range kills {
		holder := standby
		if standby, err = startServe(path, cfg); err != nil {
			holder.kill()
			return nil, err
		}
		if err := waitLine(standby, "standing by", 30*time.Second); err != nil {
			holder.kill()
			return nil, err
		}
		holder.kill() // SIGKILL
		killed := time.Now()
		if err := waitLine(standby, "receiving updates by long polling", 30*time.Second); err != nil {
			return nil, err
		}
		took = append(took, time.Since(killed))
	}
	p50, worst := percentile(took, 50), percentile(took, 100)
	return []Row{{
		Figure:   "9. poller lease takeover after kill -9",
		Measured: fmt.Sprintf("p50 %s, max %s over %d kills", p50.Round(time.Millisecond), worst.Round(time.Millisecond), len(took)),
		Target:   fmt.Sprintf("≤ %s", takeoverMax),
		Result:   verdict(worst <= takeoverMax),
		Note:     "two replicas of the real binary on one PostgreSQL, Telegram fake; from SIGKILL of the polling replica to the standby's log line saying it polls",
		Metrics:  map[string]float64{"p50_ms": ms(p50), "max_ms": ms(worst)},
	}}, nil
}

// waitLine waits until the process has logged a line containing s.
func waitLine(p *serveProc, s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.log(), s) {
		select {
		case <-p.exited:
			return fmt.Errorf("bench: opsgate serve exited before logging %q:\n%s", s, p.log())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: opsgate serve did not log %q within %s:\n%s", s, timeout, p.log())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}
