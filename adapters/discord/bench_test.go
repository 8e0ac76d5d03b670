package discord_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/discord"
	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/core"
)

// BenchmarkStreamedReply streams a 200-token reply at 100 tokens/s into a
// thread through the Discord sender with its production settings (1.2 s
// between edits, 400 ms first-send debounce) against the Discord fake, and
// reports the platform calls one reply costs, the 429s it met, and the
// latency from the first token to the first message post (of which the
// debounce is the designed part).
func BenchmarkStreamedReply(b *testing.B) {
	fake := discordtest.New(b)
	fake.AddChannel(guild, channel, "incidents")
	ad, err := discord.New(discord.Config{Token: fake.Token, APIURL: fake.URL, Guilds: []string{guild}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ad.Close() })
	answer := words("token", 200)
	var posts, edits, limited int
	var latency time.Duration
	n := 0
	for b.Loop() {
		n++
		thread := fmt.Sprintf("%d", 1700000000000000000+n)
		fake.AddThread(channel, thread, fake.Bot.ID, "bench")
		conv := discord.ConvKey(guild, thread)
		s := rendertest.NewScript(conv, fmt.Sprintf("run-%d", n))
		send := func(ev core.Event) {
			if err := ad.Send(context.Background(), ev); err != nil {
				b.Fatal(err)
			}
		}
		send(s.Event(core.EventReady))
		send(s.Event(core.EventGenerationStart))
		var first time.Time
		for i, ev := range s.Tokens(answer, 6) {
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
		var firstPost time.Time
		for _, c := range fake.Calls() {
			if c.Channel != thread {
				continue
			}
			switch {
			case c.Status == 429:
				limited++
			case c.Route == discordtest.RouteCreateMessage:
				posts++
				if firstPost.IsZero() {
					firstPost = c.Time
				}
			case c.Route == discordtest.RouteEditMessage:
				edits++
			}
		}
		latency += firstPost.Sub(first)
	}
	b.ReportMetric(float64(posts+edits)/float64(n), "calls/reply")
	b.ReportMetric(float64(posts)/float64(n), "posts/reply")
	b.ReportMetric(float64(edits)/float64(n), "edits/reply")
	b.ReportMetric(float64(limited)/float64(n), "429s/reply")
	b.ReportMetric(float64(latency.Milliseconds())/float64(n), "first-token-to-post-ms")
	b.ReportMetric(float64((latency/time.Duration(n)-discord.DefaultLimits.FirstSendDebounce).Microseconds())/1000, "overhead-beyond-debounce-ms")
}
