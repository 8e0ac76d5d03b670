package bench

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
	"github.com/opsgate/opsgate/internal/pgtest"
)

// takeoverMax is the docs/design.md §12 bound on a poller takeover.
const takeoverMax = 15 * time.Second

// Takeover is figure 9: two `opsgate serve` replicas of the real binary on
// one throw-away PostgreSQL with the Telegram adapter; kill -9 of the one
// that polls, and the time until the other polls, over kills.
func Takeover(ctx context.Context, bin *binary, kills int) ([]Row, error) {
	path, err := bin.get(ctx)
	if err != nil {
		return nil, err
	}
	cluster, err := pgtest.Start()
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL (needed for figure 9): %w", err)
	}
	defer cluster.Close()
	tg := telegramtest.NewServer()
	defer tg.Close()
	model := llmfake.NewServer()
	defer model.Close()
	dir, err := os.MkdirTemp("", "opsgate-bench-takeover-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg, err := writeServeConfig(dir, model.URL, tg.URL, []int64{42})
	if err != nil {
		return nil, err
	}
	b, _ := os.ReadFile(cfg)
	b = regexp.MustCompile(`(?m)^  url: sqlite://.*$`).ReplaceAll(b, []byte("  url: "+cluster.URL("postgres")))
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
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
