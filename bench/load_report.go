package bench

import (
	"fmt"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core/coretest/llmfake"
)

// loadRun is what one run of figure 4's load observed.
type loadRun struct {
	opt       LoadOptions
	elapsed   time.Duration // questions queued to the last final text landing
	cpu, wall time.Duration // the child's CPU time over the load, and the load's wall time
	hwmKB     int64         // the child's peak RSS when the last final landed
	exitRSSKB int64         // its peak RSS as wait4 reports it, after shutdown
	code      int           // its exit code on SIGTERM
	warnings  int           // WARN and ERROR lines it logged

	calls        map[string]int // calls to the chats by method, refused ones included
	refused      map[string]int // 429s by the limit that refused them
	early        int            // calls before a 429's retry_after had passed
	exact, dupes int
	edited       int            // chats whose message was edited: drafts posted before the final
	firstCall    time.Duration  // the first rendering call
	rate         float64        // successful rendering calls per second, first to last
	asked        time.Duration  // the last question reaching the model
	earlyAfter   map[string]int // early calls by the method whose 429 they did not honour
	chatAfter    map[string]int // per-chat 429s by the chat's previous accepted call
	globalStart  int            // global 429s in the first 2 s of calls
}

// observe reads what happened off the fakes; t0 is when the questions
// were queued.
func (r *loadRun) observe(tg *telegramtest.Server, model *llmfake.Server, s *loadScript, t0 time.Time) {
	r.calls, r.refused, r.chatAfter = map[string]int{}, map[string]int{}, map[string]int{}
	landed, posted, edited := map[int64]time.Time{}, map[int64]int{}, map[int64]bool{}
	prev := map[int64]string{}
	refusals := map[int64][]telegramtest.Call{}
	var first, last, start time.Time
	ok := 0
	for _, c := range tg.Calls() {
		chat := c.Chat()
		if _, ours := s.want[chat]; !ours {
			continue
		}
		if start.IsZero() {
			start = c.Time
		}
		r.calls[c.Method]++
		switch {
		case c.Code == 429 && c.Limit == telegramtest.LimitChat:
			r.chatAfter[prev[chat]]++
		case c.Code == 429 && c.Limit == telegramtest.LimitGlobal && c.Time.Sub(start) < 2*time.Second:
			r.globalStart++
		case c.Code == 200:
			prev[chat] = c.Method
		}
		if c.Code == 429 {
			r.refused[c.Limit]++
			refusals[chat] = append(refusals[chat], c)
		}
		if c.Code != 200 || (c.Method != "sendMessage" && c.Method != "editMessageText") {
			continue
		}
		ok++
		if first.IsZero() {
			first = c.Time
		}
		last = c.Time
		landed[chat] = c.Time
		if c.Method == "sendMessage" {
			posted[chat]++
		} else {
			edited[chat] = true
		}
	}
	// Which method's 429 an early call did not honour: the chat's latest
	// 429 before it.
	r.earlyAfter = map[string]int{}
	for _, e := range tg.EarlyRetries() {
		if _, ours := s.want[e.Chat()]; !ours {
			continue
		}
		r.early++
		by := ""
		for _, c := range refusals[e.Chat()] {
			if c.Time.Before(e.Time) {
				by = c.Method
			}
		}
		r.earlyAfter[by]++
	}
	for _, u := range s.users {
		if final(tg.Messages(u), s.want[u]) {
			r.exact++
		}
		if posted[u] > 1 {
			r.dupes++
		}
		r.elapsed = max(r.elapsed, landed[u].Sub(t0))
	}
	r.edited = len(edited)
	r.firstCall = first.Sub(t0)
	if d := last.Sub(first).Seconds(); d > 0 {
		r.rate = float64(ok-1) / d
	}
	for _, req := range model.Requests() {
		r.asked = max(r.asked, req.Received.Sub(t0))
	}
}

// honourNote explains early calls, if any.
func (r *loadRun) honourNote() string {
	if r.early == 0 {
		return ""
	}
	out := fmt.Sprintf("; cause: %d of the early calls followed a 429 answered to a typing indicator (sendChatAction), "+
		"%d one answered to sendMessage or editMessageText", r.earlyAfter["sendChatAction"],
		r.earlyAfter["sendMessage"]+r.earlyAfter["editMessageText"])
	if r.earlyAfter["sendChatAction"] > 0 {
		out += "; render's sendTyping (adapters/render/worker.go) drops a typing indicator's error without recording " +
			"its retry_after in the limiter (Limiter.Backoff), so the chat's next call does not wait for it"
	}
	return out
}

// bound is the lower bound in seconds: one call per conversation at the
// fake's global rate.
func (r *loadRun) bound() float64 { return float64(r.opt.Conversations) / float64(r.opt.Global) }

func (r *loadRun) ratio() float64 { return r.elapsed.Seconds() / r.bound() }

func (r *loadRun) rendering() int { return r.calls["sendMessage"] + r.calls["editMessageText"] }

func (r *loadRun) total429() int {
	n := 0
	for _, v := range r.refused {
		n += v
	}
	return n
}

func (r *loadRun) rows() []Row {
	o := r.opt
	n := float64(o.Conversations)
	cores := r.cpu.Seconds() / r.wall.Seconds()
	name := fmt.Sprintf("4. %d conversations on one bot", o.Conversations)
	if o.Replicated {
		name += ", two replicas on PostgreSQL"
	}
	how := fmt.Sprintf("the real binary (opsgate serve, production settings) in a child process, the Bot API and model "+
		"fakes in this one; %d private chats each ask once, the questions queued at once; each answer streams %d tokens "+
		"at 100 tokens/s; the fake allows %d calls/s in all and %d per chat, 429 with retry_after beyond; required calls: "+
		"one per conversation, a sendMessage carrying the final text, which the renderer's contract allows (a draft not "+
		"yet posted when its run completes is posted once, complete), and one call per chat leaves the per-chat budget "+
		"slack, so the bound is conversations / global rate; timed from queueing the questions to the last final text "+
		"landing at the fake; first rendering call after %.1f s; the questions reached the model within %.1f s; "+
		"calls to the chats: %d sendMessage, %d editMessageText, %d sendChatAction (%.2f rendering calls per "+
		"conversation), %d answered 429; successful rendering calls went out at %.1f/s",
		o.Conversations, o.Chunks, o.Global, o.PerChat, r.firstCall.Seconds(), r.asked.Seconds(),
		r.calls["sendMessage"], r.calls["editMessageText"], r.calls["sendChatAction"], float64(r.rendering())/n,
		r.total429(), r.rate)
	if r.ratio() > loadRatioMax {
		how += "; " + r.cause()
	}
	return []Row{
		{
			Figure: name + ": time for all finals",
			Measured: fmt.Sprintf("%.1f s = %.2fx the lower bound (%.1f s = %d required calls / %d calls/s)",
				r.elapsed.Seconds(), r.ratio(), r.bound(), o.Conversations, o.Global),
			Target: fmt.Sprintf("<= %.1fx the lower bound", loadRatioMax),
			Result: verdict(r.ratio() <= loadRatioMax),
			Note:   how,
			Metrics: map[string]float64{
				"seconds": r.elapsed.Seconds(), "lower_bound_s": r.bound(), "ratio": r.ratio(),
				"send_message": float64(r.calls["sendMessage"]), "edit_message_text": float64(r.calls["editMessageText"]),
				"send_chat_action": float64(r.calls["sendChatAction"]), "rendering_calls_per_conversation": float64(r.rendering()) / n,
				"rendering_calls_per_s": r.rate, "drafts_edited": float64(r.edited), "questions_in_s": r.asked.Seconds(),
			},
		},
		{
			Figure: name + ": 429s not honoured",
			Measured: fmt.Sprintf("%d (of %d 429s: %d per-chat, %d global)", r.early, r.total429(),
				r.refused[telegramtest.LimitChat], r.refused[telegramtest.LimitGlobal]),
			Target: "0",
			Result: verdict(r.early == 0),
			Note: "a 429 is honoured when no call to that chat follows before its retry_after has passed, checked on the " +
				"fake's recorded call times (Telegram's 429 does not say whether the global or the chat's limit was hit, " +
				"so a client can only hold back the chat it called; the adapter also paces every call through its limiter); " +
				"the engine never sees platform errors" + r.honourNote(),
			Metrics: map[string]float64{"early": float64(r.early), "429": float64(r.total429()),
				"429_chat": float64(r.refused[telegramtest.LimitChat]), "429_global": float64(r.refused[telegramtest.LimitGlobal])},
		},
		{
			Figure:   name + ": final texts exact, delivered once",
			Measured: fmt.Sprintf("%d/%d exact, %d chats with a second message", r.exact, o.Conversations, r.dupes),
			Target:   fmt.Sprintf("%d/%d, 0", o.Conversations, o.Conversations),
			Result:   verdict(r.exact == o.Conversations && r.dupes == 0),
			Note:     "exact: the chat has exactly one bot message, showing the model's whole answer and no buttons",
			Metrics:  map[string]float64{"exact": float64(r.exact), "duplicates": float64(r.dupes)},
		},
		{
			Figure:   name + ": peak RSS",
			Measured: fmt.Sprintf("%.0f MB", mb(r.hwmKB)),
			Target:   fmt.Sprintf("<= %d MB", loadRSSMaxMB),
			Result:   verdict(mb(r.hwmKB) <= loadRSSMaxMB),
			Note: fmt.Sprintf("VmHWM of the opsgate serve process (the fakes are in the parent) when the last final landed; "+
				"wait4's maxrss after its shutdown: %.0f MB; it logged %d WARN/ERROR lines; exit code on SIGTERM: %d",
				mb(r.exitRSSKB), r.warnings, r.code),
			Metrics: map[string]float64{"peak_rss_mb": mb(r.hwmKB), "exit_maxrss_mb": mb(r.exitRSSKB), "exit_code": float64(r.code)},
		},
		{
			Figure:   name + ": average CPU",
			Measured: fmt.Sprintf("%.2f cores (%.1f s CPU over %.1f s)", cores, r.cpu.Seconds(), r.wall.Seconds()),
			Target:   fmt.Sprintf("<= %.0f core", loadCPUMax),
			Result:   verdict(cores <= loadCPUMax),
			Note:     "user + system CPU of the opsgate serve process (/proc/<pid>/stat) from queueing the questions to the last final",
			Metrics:  map[string]float64{"cores": cores, "cpu_s": r.cpu.Seconds(), "wall_s": r.wall.Seconds()},
		},
	}
}

// cause explains a miss of the time target from the calls made: every call
// to a chat, refused or not, typing indicators included, takes a token of
// the adapter's limiter, which sends adapterRate calls a second.
func (r *loadRun) cause() string {
	spent := r.rendering() + r.calls["sendChatAction"]
	out := fmt.Sprintf("cause of the miss: the adapter's limiter sends at most %d calls/s (its default, a margin under "+
		"Telegram's %d), so even one call per conversation takes %.2fx the bound; and it spent %d calls, not %d: "+
		"%d editMessageText, for %d drafts posted while their answer was still streaming and edited to the final later "+
		"(render's draft worker composes the text once Limiter.Delay says the budget is there, then waits in "+
		"Limiter.Wait behind every other chat that saw the same, often past the end of the answer; how many depends on "+
		"how many answers are still streaming then, and varies widely from run to run), %d typing indicators, and %d calls refused with 429 (%d per-chat, %d of them right after the chat's "+
		"typing indicator; %d global, %d of them in the first 2 s, where the limiter's full bucket adds its burst to its "+
		"rate); %d calls / %d per s = %.1f s, %.1f s measured",
		adapterRate, r.opt.Global, float64(r.opt.Global)/adapterRate, spent, r.opt.Conversations,
		r.calls["editMessageText"], r.edited, r.calls["sendChatAction"], r.total429(),
		r.refused[telegramtest.LimitChat], r.chatAfter["sendChatAction"], r.refused[telegramtest.LimitGlobal], r.globalStart,
		spent, adapterRate, float64(spent)/adapterRate, r.elapsed.Seconds())
	if r.rate >= 0.95*adapterRate {
		out += fmt.Sprintf("; the first-send debounce and the reserve for final answers cost no throughput: the limiter "+
			"kept %.1f of its %d calls/s going", r.rate, adapterRate)
	}
	return out
}
