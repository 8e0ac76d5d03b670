package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// RoundOneBaseline is the last commit of round 1 (11aebf0, "coretest: one
// SyncBuffer for the terminal's and the binary's tests"): the revision
// figure 12 compares against when BENCH_BASELINE is unset and the
// repository has no release tag before HEAD.
const RoundOneBaseline = "11aebf0"

// Figure 12 targets: HEAD against the baseline, as ratios measured in the
// same run.
const (
	sideRatioMax = 1.10
)

// SideOptions size figure 12. The zero value of every field means its
// default.
type SideOptions struct {
	// Baseline is the revision to compare with: BENCH_BASELINE, else the
	// newest tag before HEAD, else RoundOneBaseline.
	Baseline string
	// Rounds is the number of alternations (default 5); Messages the
	// conversations each start serves (default 20), one after another.
	Rounds, Messages int
	// Starts is how many starts a round measures of each binary (default
	// 5): one serves the conversations, the others only start and stop.
	// A start lasts about 15 ms and varies by a few on a shared machine;
	// one sample a round left the median to chance.
	Starts int
}

func (o *SideOptions) defaults() {
	if o.Starts == 0 {
		o.Starts = 5
	}
	if o.Rounds == 0 {
		o.Rounds = 5
	}
	if o.Messages == 0 {
		o.Messages = 20
	}
}

// sideRun is one start of one binary, measured.
type sideRun struct {
	startups  []time.Duration // exec to the first getUpdates, each start
	rssKB     int64           // idle, after idleFor
	toModel   []time.Duration // the update handed to getUpdates to the model's request
	firstSend []time.Duration // the model's request to the first sendMessage, debounce included
	cpuPerMsg time.Duration
}

// SideBySide is figure 12: the baseline revision and HEAD, both built
// here, run alternately through the real binary (`opsgate serve` with the
// Telegram adapter against the Bot API fake and the scripted model, SQLite
// in a temporary directory), so a regression shows as a ratio of two
// things measured in the same run rather than as a number to remember. For
// each start: exec to the first getUpdates, idle RSS, then Messages new
// private chats one after another, each a question whose 20-token answer
// streams at 100 tokens/s: the update reaching getUpdates to the model's
// request, the request to the first sendMessage (the fake model sends its
// first token at once; this includes the adapter's first-send debounce), and
// the process's CPU per conversation.
func SideBySide(ctx context.Context, bin *binary, opt SideOptions) ([]Row, error) {
	opt.defaults()
	head, err := bin.get(ctx)
	if err != nil {
		return nil, err
	}
	rev, err := baselineRev(ctx, opt.Baseline)
	if err != nil {
		return nil, err
	}
	base, err := buildRevision(ctx, rev)
	if err != nil {
		return nil, err
	}
	bins := [2]string{base, head}
	// The baseline may have sat in the page cache since an earlier run,
	// HEAD was just linked: both are read from disk alike (settle).
	for _, b := range bins {
		if err := settle(b); err != nil {
			return nil, err
		}
	}
	var runs [2][]sideRun
	dirs := [2]string{}
	for i := range dirs {
		// Each binary keeps its own store: the two schemas differ.
		if dirs[i], err = os.MkdirTemp("", "opsgate-bench-side-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dirs[i])
		// A first start creates and migrates the store; it is not measured.
		if _, err := sideOnce(ctx, bins[i], dirs[i], 1, 1); err != nil {
			return nil, fmt.Errorf("warm-up of %s: %w", sideName(i, rev), err)
		}
	}
	for r := range opt.Rounds {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			got, err := sideOnce(ctx, bins[i], dirs[i], opt.Starts, opt.Messages)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sideName(i, rev), err)
			}
			runs[i] = append(runs[i], got)
		}
	}
	return sideRows(rev, runs), nil
}

func sideName(i int, rev string) string {
	if i == 0 {
		return "baseline " + rev
	}
	return "HEAD"
}

// sideRows reduces the runs to one row a quantity: the medians of both
// binaries and HEAD's ratio to the baseline.
func sideRows(rev string, runs [2][]sideRun) []Row {
	type quantity struct {
		name, unit string
		get        func(sideRun) []float64
		limit      float64 // the ratio's bound, 0 for none
	}
	qs := []quantity{
		{"start-up (exec to first getUpdates)", "ms", func(s sideRun) []float64 { return msAll(s.startups) }, sideRatioMax},
		{"message to model", "ms", func(s sideRun) []float64 { return msAll(s.toModel) }, sideRatioMax},
		{"first token to first send", "ms", func(s sideRun) []float64 { return msAll(s.firstSend) }, 0},
		{"idle RSS", "MB", func(s sideRun) []float64 { return []float64{mb(s.rssKB)} }, 0},
		{"CPU per conversation", "ms", func(s sideRun) []float64 { return []float64{ms(s.cpuPerMsg)} }, 0},
	}
	var rows []Row
	for _, q := range qs {
		var m [2]float64
		for i := range runs {
			var xs []float64
			for _, r := range runs[i] {
				xs = append(xs, q.get(r)...)
			}
			m[i] = median(xs)
		}
		ratio := m[1] / m[0]
		row := Row{
			Figure:   "12. side by side: " + q.name,
			Measured: fmt.Sprintf("HEAD %.1f %s vs %s %.1f %s: %.2fx", m[1], q.unit, rev, m[0], q.unit, ratio),
			Target:   "reported",
			Result:   "-",
			Note: fmt.Sprintf("%d alternations of the two real binaries in one run (%d starts of each), medians; Telegram path against the Bot API fake, "+
				"scripted model, SQLite; both binaries read from disk (settle)", len(runs[0]), starts(runs[0])),
			Metrics: map[string]float64{"head": m[1], "baseline": m[0], "ratio": ratio},
		}
		if q.limit > 0 {
			row.Target = fmt.Sprintf("<= %.2fx the baseline", q.limit)
			row.Result = verdict(ratio <= q.limit)
		}
		if q.unit == "MB" {
			row.Target = fmt.Sprintf("HEAD <= %d MB", idleRSSMaxMB)
			row.Result = verdict(m[1] <= idleRSSMaxMB)
		}
		rows = append(rows, row)
	}
	return rows
}

// starts counts the starts measured in runs.
func starts(runs []sideRun) int {
	n := 0
	for _, r := range runs {
		n += len(r.startups)
	}
	return n
}

func msAll(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = ms(d)
	}
	return out
}

// sideChats counts the chats figure 12 used so far.
var sideChats int64

// sideOnce starts bin with its store in dir against new fakes starts
// times, measuring each start; the last start then serves n conversations,
// one after another, and is stopped.
func sideOnce(ctx context.Context, bin, dir string, starts, n int) (sideRun, error) {
	tg := telegramtest.NewServer()
	defer tg.Close()
	model := llmfake.NewServer()
	defer model.Close()
	// New chats every start: the store remembers the fake's message ids
	// (which start again with each fake) per chat.
	sideChats += int64(n)
	firstUser := 500_000 + sideChats
	users := make([]int64, n)
	for i := range users {
		users[i] = firstUser + int64(i)
	}
	answer := replyText("side", 20)
	model.SetResponder(func(llmfake.Request) llmfake.Reply {
		return llmfake.Reply{Text: answer, TokenDelay: tokenDelay}
	})
	cfg, err := writeServeConfig(dir, model.URL, tg.URL, users)
	if err != nil {
		return sideRun{}, err
	}
	var s sideRun
	var p *serveProc
	for k := range max(starts, 1) {
		polls := len(tg.PollStarts())
		if p, err = startServe(bin, cfg); err != nil {
			return sideRun{}, err
		}
		defer p.kill()
		if err := waitFor(ctx, 20*time.Second, func() bool { return len(tg.PollStarts()) > polls }); err != nil {
			return sideRun{}, fmt.Errorf("no getUpdates: %w\n%s", err, p.log())
		}
		s.startups = append(s.startups, tg.PollStarts()[polls].Sub(p.started))
		if k == max(starts, 1)-1 {
			break
		}
		if code, err := p.stop(15 * time.Second); err != nil || code != 0 {
			return sideRun{}, fmt.Errorf("exit %d on SIGTERM: %v\n%s", code, err, p.log())
		}
	}
	if err := sleepCtx(ctx, idleFor); err != nil {
		return sideRun{}, err
	}
	if s.rssKB, _, err = memKB(p.cmd.Process.Pid); err != nil {
		return sideRun{}, err
	}
	cpu0, err := cpuTime(p.cmd.Process.Pid)
	if err != nil {
		return sideRun{}, err
	}
	// The last start's first long poll is waiting; earlier starts' ended.
	polls := len(tg.PollStarts()) - 1
	for i, u := range users {
		// Hand the update to a waiting long poll, as Telegram does: the
		// adapter polls again once it has taken the previous update.
		if err := waitFor(ctx, 10*time.Second, func() bool { return len(tg.PollStarts()) > polls }); err != nil {
			return sideRun{}, fmt.Errorf("no long poll waiting: %w", err)
		}
		t0 := time.Now()
		tg.SendText(telegramtest.PrivateChat(u), telegramtest.User(u, fmt.Sprintf("user%d", u)), "is checkout healthy?")
		polls = len(tg.PollStarts())
		reqs := model.WaitRequests(i+1, 20*time.Second)
		if len(reqs) < i+1 {
			return sideRun{}, fmt.Errorf("conversation %d: the model got no request:\n%s", i, p.log())
		}
		got := reqs[i].Received
		s.toModel = append(s.toModel, got.Sub(t0))
		if err := waitFor(ctx, 20*time.Second, func() bool {
			ms := tg.Messages(u)
			return len(ms) > 0 && strings.TrimSpace(ms[len(ms)-1].Visible) == strings.TrimSpace(answer)
		}); err != nil {
			return sideRun{}, fmt.Errorf("conversation %d: the answer was not shown: %w\n%s", i, err, p.log())
		}
		if sends := tg.CallsTo("sendMessage", u); len(sends) > 0 {
			s.firstSend = append(s.firstSend, sends[0].Time.Sub(got))
		}
	}
	cpu1, err := cpuTime(p.cmd.Process.Pid)
	if err != nil {
		return sideRun{}, err
	}
	s.cpuPerMsg = (cpu1 - cpu0) / time.Duration(max(n, 1))
	if code, err := p.stop(15 * time.Second); err != nil || code != 0 {
		return sideRun{}, fmt.Errorf("exit %d on SIGTERM: %v\n%s", code, err, p.log())
	}
	return s, nil
}

// waitFor polls cond every millisecond until it holds or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", timeout)
		}
		if err := sleepCtx(ctx, time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// baselineRev resolves the revision to compare with: rev, else
// BENCH_BASELINE, else the newest tag before HEAD, else RoundOneBaseline.
func baselineRev(ctx context.Context, rev string) (string, error) {
	if rev == "" {
		rev = os.Getenv("BENCH_BASELINE")
	}
	if rev == "" {
		if out, err := exec.CommandContext(ctx, "git", "describe", "--tags", "--abbrev=0", "HEAD^").Output(); err == nil {
			rev = strings.TrimSpace(string(out))
		}
	}
	if rev == "" {
		rev = RoundOneBaseline
	}
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", rev+"^{commit}").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("bench: figure 12's baseline %q is not a commit of this repository: %v: %s", rev, err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// buildRevision builds cmd/opsgate at rev from `git archive` in a
// temporary directory and keeps the binary in the user's cache directory,
// keyed by the commit, so later runs reuse it.
func buildRevision(ctx context.Context, rev string) (string, error) {
	full, err := exec.CommandContext(ctx, "git", "rev-parse", rev+"^{commit}").Output()
	if err != nil {
		return "", fmt.Errorf("bench: resolve %s: %w", rev, err)
	}
	commit := strings.TrimSpace(string(full))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(commit))
	out := filepath.Join(cache, "opsgate-bench", hex.EncodeToString(sum[:8]), "opsgate")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	src, err := os.MkdirTemp("", "opsgate-bench-baseline-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	tarball := filepath.Join(src, "src.tar")
	// From a subdirectory git archive takes only that subtree: archive the
	// repository's top, wherever the command was started.
	top, err := exec.CommandContext(ctx, "git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("bench: find the repository of %s: %w", rev, err)
	}
	archive := exec.CommandContext(ctx, "git", "archive", "--format=tar", "-o", tarball, commit)
	archive.Dir = strings.TrimSpace(string(top))
	if msg, err := archive.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: git archive %s: %v: %s", rev, err, msg)
	}
	if msg, err := exec.CommandContext(ctx, "tar", "-xf", tarball, "-C", src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: unpack %s: %v: %s", rev, err, msg)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", out+".tmp", "./cmd/opsgate")
	build.Dir = src
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("bench: build %s: %v\n%s", rev, err, msg)
	}
	return out, os.Rename(out+".tmp", out)
}
