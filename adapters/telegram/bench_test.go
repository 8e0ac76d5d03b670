package telegram_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
	"github.com/opsgate/opsgate/core"
)

// BenchmarkStreamedReply streams a 200-token reply at 100 tokens/s through
// the Telegram sender with its production settings (1 s between edits,
// 300 ms first-send debounce) against the Bot API fake, and reports the
// platform calls one reply costs and the latency from the first token to
// the first sendMessage (of which the debounce is the designed part).
func BenchmarkStreamedReply(b *testing.B) {
	ad, tg := newSenderOnly(b, 0, 0)
	answer := words(200)
	var calls, sends, edits int
	var latency time.Duration
	chat := int64(9000)
	n := 0
	for b.Loop() {
		chat++
		n++
		conv := telegram.ConvKey(telegramtest.BotID, chat, "")
		s := rendertest.NewScript(conv, fmt.Sprintf("run-%d", n))
		send := func(ev core.Event) {
			if err := ad.Sender().Send(context.Background(), ev); err != nil {
				b.Fatal(err)
			}
		}
		send(s.Event(core.EventReady))
		send(s.Event(core.EventGenerationStart))
		var first time.Time
		for i, ev := range s.Tokens(answer, 5) {
			if i == 0 {
				first = time.Now()
			}
			send(ev)
			time.Sleep(10 * time.Millisecond)
		}
		send(s.Text(core.EventGenerationComplete, answer))
		send(s.Completed(core.RunDone, answer))
		if err := ad.Sender().Flush(context.Background()); err != nil {
			b.Fatal(err)
		}
		firstSend := time.Time{}
		for _, c := range tg.Calls() {
			if c.Chat() != chat {
				continue
			}
			calls++
			switch c.Method {
			case "sendMessage":
				sends++
				if firstSend.IsZero() {
					firstSend = c.Time
				}
			case "editMessageText":
				edits++
			}
		}
		latency += firstSend.Sub(first)
	}
	b.ReportMetric(float64(calls)/float64(n), "calls/reply")
	b.ReportMetric(float64(sends)/float64(n), "sends/reply")
	b.ReportMetric(float64(edits)/float64(n), "edits/reply")
	b.ReportMetric(float64(latency.Milliseconds())/float64(n), "first-token-to-request-ms")
	b.ReportMetric(float64((latency/time.Duration(n)-300*time.Millisecond).Microseconds())/1000, "overhead-beyond-debounce-ms")
}
