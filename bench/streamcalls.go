package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
)

// Figure 3 target and reply.
const (
	streamCallsMax = 4 // 1 post + <= 2 edits + the final
	streamChunks   = 200
	streamEvery    = 300 * time.Millisecond // stagger of the replies
)

// callPattern is what one chat received, for the report.
type callPattern struct {
	render, posts, edits, typing int
	seq                          []string // "post@0.31s", "edit@1.33s", …
	finalEdit                    bool     // the final text came with an edit, not a post
	exact                        bool
}

// StreamedReplyCalls is figure 3: replies conversations, each a reply of
// chunks tokens streamed at 100 tokens/s through the Telegram adapter
// (1 s edit interval, 300 ms debounce) in this process, and the Bot API
// calls each one cost. Rendering calls (sendMessage, editMessageText) are
// counted against the target; typing indicators (sendChatAction) are
// reported apart.
func StreamedReplyCalls(ctx context.Context, replies, chunks int) ([]Row, error) {
	s, err := newScriptedChats(300_000, replies, chunks, streamMsg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	users, texts, want, clock := s.users, s.texts, s.want, s.clock
	for i := range users {
		s.say(users[i], streamMsg(i))
		if err := sleepCtx(ctx, streamEvery); err != nil {
			return nil, err
		}
	}
	if err := s.waitFinals(ctx, want, 30*time.Second); err != nil {
		return nil, err
	}
	// The sender may still be closing the draft; Flush waits for it, so a
	// late extra call would be counted.
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = s.ad.Sender().Flush(fctx)
	cancel()
	if err != nil {
		return nil, err
	}
	var pats []callPattern
	for i, u := range users {
		tok, _ := clock.get(streamMsg(i))
		pats = append(pats, patternOf(s.tg.Calls(), u, tok, final(s.tg.Messages(u), want[u])))
	}
	tokens, err := countTokens(texts[streamMsg(0)])
	if err != nil {
		return nil, err
	}
	worst, exact, alike := 0, 0, countAlike(pats)
	for _, p := range pats {
		worst = max(worst, p.render)
		if p.exact {
			exact++
		}
	}
	p := pats[0]
	how := "the final text is the last edit"
	if !p.finalEdit {
		how = "the final text is the post"
	}
	measured := fmt.Sprintf("%d calls: %d sendMessage + %d editMessageText, %s (%d of %d replies alike); final text exact %d/%d",
		p.render, p.posts, p.edits, how, alike, len(pats), exact, len(pats))
	if alike != len(pats) {
		measured = fmt.Sprintf("at most %d calls per reply (they differ, see note); final text exact %d/%d", worst, exact, len(pats))
	}
	var seqs []string
	for i, p := range pats {
		seqs = append(seqs, fmt.Sprintf("reply %d: %s", i, strings.Join(p.seq, ", ")))
	}
	typing := 0
	for _, p := range pats {
		typing += p.typing
	}
	return []Row{{
		Figure:   fmt.Sprintf("3. platform calls per streamed reply (%d tokens at 100/s, 1 s edits)", chunks),
		Measured: measured,
		Target:   fmt.Sprintf("<= %d calls (1 post + <= 2 edits + final), final text exact", streamCallsMax),
		Result:   verdict(worst <= streamCallsMax && exact == len(pats)),
		Note: fmt.Sprintf("in process: engine + Telegram adapter (production settings) + Bot API fake; %d replies of %d streamed "+
			"chunks (%d cl100k tokens), started %d ms apart; counted: sendMessage and editMessageText of the chat; typing "+
			"indicators (sendChatAction) are not counted: %d in all, sent when the run starts, before the first token; "+
			"calls timed from the model's first token: %s",
			len(pats), chunks, tokens, streamEvery.Milliseconds(), typing, strings.Join(seqs, "; ")),
		Metrics: map[string]float64{
			"calls_per_reply_max": float64(worst), "posts": float64(p.posts), "edits": float64(p.edits),
			"typing_per_reply": float64(typing) / float64(len(pats)), "replies": float64(len(pats)),
			"final_exact": float64(exact), "tokens": float64(tokens),
		},
	}}, nil
}

func streamMsg(i int) string { return fmt.Sprintf("figure 3, reply %d: what happened to checkout?", i) }

// patternOf summarises the calls of one chat, timed from t0.
func patternOf(calls []telegramtest.Call, chat int64, t0 time.Time, exact bool) callPattern {
	p := callPattern{exact: exact}
	last := ""
	for _, c := range calls {
		if c.Chat() != chat {
			continue
		}
		at := fmt.Sprintf("@%.2fs", c.Time.Sub(t0).Seconds())
		if c.Code != 200 {
			at += fmt.Sprintf(" (%d)", c.Code)
		}
		switch c.Method {
		case "sendMessage":
			p.render++
			p.posts++
			p.seq = append(p.seq, "post"+at)
		case "editMessageText":
			p.render++
			p.edits++
			p.seq = append(p.seq, "edit"+at)
		case "sendChatAction":
			p.typing++
			p.seq = append(p.seq, "typing"+at)
			continue
		default:
			p.seq = append(p.seq, c.Method+at)
		}
		last = c.Method
	}
	p.finalEdit = last == "editMessageText"
	for i := len(p.seq) - 1; i >= 0; i-- {
		if !strings.HasPrefix(p.seq[i], "typing") {
			p.seq[i] += " (final)"
			break
		}
	}
	return p
}

// countAlike counts the patterns with the first one's shape.
func countAlike(pats []callPattern) int {
	n := 0
	for _, p := range pats {
		if p.render == pats[0].render && p.posts == pats[0].posts && p.finalEdit == pats[0].finalEdit {
			n++
		}
	}
	return n
}
