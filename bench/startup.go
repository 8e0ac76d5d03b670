package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// Figure 5 targets.
const (
	idleRSSMaxMB = 30
	readyMax     = 200 * time.Millisecond
	idleFor      = 2 * time.Second
)

// writeServeConfig writes the smallest opsgate.yaml for serve with the
// Telegram adapter against the fakes: the store in dir, no MCP servers,
// every other key at its default.
func writeServeConfig(dir, llmURL, tgURL string, users []int64) (string, error) {
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = fmt.Sprint(u)
	}
	cfg := fmt.Sprintf(`llm:
  base_url: %s
  api_key: bench-key
  model: bench-model
store:
  url: sqlite://%s
server:
  listen: 127.0.0.1:0
telegram:
  token: %q
  api_url: %s
  allowed_users: [%s]
`, llmURL, filepath.Join(dir, "data", "opsgate.db"), telegramtest.Token, tgURL, strings.Join(ids, ", "))
	path := filepath.Join(dir, "opsgate.yaml")
	return path, os.WriteFile(path, []byte(cfg), 0o600)
}

// start is one measured start of serve.
type start struct {
	serving, connected time.Duration
	rssKB              int64
	code               int
}

// Startup is figure 5: starts of the real binary, `opsgate serve` with the
// Telegram adapter against the Bot API fake (in this process) and no MCP
// servers. For each: the time from exec to the "opsgate serving" log line
// and to the adapter's first getUpdates reaching the fake (connected:
// getMe, setMyCommands and deleteWebhook done), the RSS after idleFor
// without traffic, and a clean exit on SIGTERM. Medians are reported; the
// first start also creates and migrates the store.
func Startup(ctx context.Context, bin *binary, starts int) ([]Row, error) {
	path, err := bin.get(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "opsgate-bench-serve-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	model := llmfake.NewServer()
	defer model.Close()
	var got []start
	for range starts {
		s, err := startOnce(ctx, path, dir, model.URL)
		if err != nil {
			return nil, err
		}
		got = append(got, s)
	}
	base, err := versionTime(ctx, path, starts)
	if err != nil {
		return nil, err
	}
	var serving, connected, rss []float64
	clean := 0
	for _, s := range got {
		serving = append(serving, ms(s.serving))
		connected = append(connected, ms(s.connected))
		rss = append(rss, mb(s.rssKB))
		if s.code == 0 {
			clean++
		}
	}
	ready := median(connected)
	readyOK := ready <= ms(readyMax) && clean == len(got)
	note := fmt.Sprintf("%d starts of the real binary, median; ready = the adapter's first getUpdates reaching the fake "+
		"(after getMe, setMyCommands, deleteWebhook); the \"opsgate serving\" line comes %.0f ms after exec (median); "+
		"first start (creates and migrates the store): serving %.0f ms, connected %.0f ms; all starts: %s ms; "+
		"for scale, `opsgate version` runs from exec to exit in %.0f ms (median); clean exit (0) on SIGTERM: %d/%d",
		len(got), median(serving), serving[0], connected[0], joinFloats(connected, "%.0f"), base, clean, len(got))
	if clean != len(got) {
		note += "; a start that did not exit 0 fails the row"
	}
	return []Row{
		{
			Figure:   "5. idle RSS of opsgate serve (Telegram connected)",
			Measured: fmt.Sprintf("%.1f MB (median of %d; %s MB)", median(rss), len(rss), joinFloats(rss, "%.1f")),
			Target:   fmt.Sprintf("<= %d MB", idleRSSMaxMB),
			Result:   verdict(median(rss) <= idleRSSMaxMB),
			Note: fmt.Sprintf("VmRSS from /proc/<pid>/status after %s with the adapter long polling and no traffic; "+
				"no MCP servers; SQLite store in a temporary directory; the binary read from disk, not as the linker left it in the page cache (settle)", idleFor),
			Metrics: map[string]float64{"rss_mb": median(rss)},
		},
		{
			Figure:   "5. start to ready (adapter connected, no MCP servers)",
			Measured: fmt.Sprintf("%.0f ms (median of %d)", ready, len(got)),
			Target:   fmt.Sprintf("<= %d ms", readyMax.Milliseconds()),
			Result:   verdict(readyOK),
			Note:     note,
			Metrics: map[string]float64{
				"ready_ms": ready, "serving_ms": median(serving), "first_ready_ms": connected[0],
				"version_ms": base, "clean_exits": float64(clean), "starts": float64(len(got)),
			},
		},
	}, nil
}

// startOnce starts serve against a new Bot API fake, measures it and stops it.
func startOnce(ctx context.Context, bin, dir, llmURL string) (start, error) {
	tg := telegramtest.NewServer()
	defer tg.Close()
	cfg, err := writeServeConfig(dir, llmURL, tg.URL, []int64{42})
	if err != nil {
		return start{}, err
	}
	p, err := startServe(bin, cfg)
	if err != nil {
		return start{}, err
	}
	defer p.kill()
	if err := p.waitServing(10 * time.Second); err != nil {
		return start{}, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(tg.PollStarts()) == 0 {
		if time.Now().After(deadline) {
			return start{}, fmt.Errorf("bench: opsgate serve did not poll Telegram in 10 s:\n%s", p.log())
		}
		time.Sleep(time.Millisecond)
	}
	s := start{serving: p.servAt.Sub(p.started), connected: tg.PollStarts()[0].Sub(p.started)}
	if err := sleepCtx(ctx, idleFor); err != nil {
		return start{}, err
	}
	if s.rssKB, _, err = memKB(p.cmd.Process.Pid); err != nil {
		return start{}, err
	}
	if s.code, err = p.stop(15 * time.Second); err != nil {
		return start{}, err
	}
	return s, nil
}

// versionTime is the median time of `opsgate version` from exec to exit:
// what starting the binary costs before opsgate does anything.
func versionTime(ctx context.Context, bin string, n int) (float64, error) {
	var ts []float64
	for range max(n, 3) {
		t0 := time.Now()
		if out, err := exec.CommandContext(ctx, bin, "version").CombinedOutput(); err != nil {
			return 0, fmt.Errorf("bench: opsgate version: %v: %s", err, out)
		}
		ts = append(ts, ms(time.Since(t0)))
	}
	return median(ts), nil
}

func joinFloats(xs []float64, format string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(s, ", ")
}
