package discord_test

import (
	"path"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/discord"
	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/core/coretest"
)

// Issue 22 acceptance 4: golden files of what Discord users see, as the
// REST API receives it: the message JSON (content, components with their
// buttons, allowed mentions) of approval cards in every state, drafts and
// tool lines (testdata/golden; -update rewrites them).
func TestCardsDraftsAndToolLinesGolden(t *testing.T) {
	var fake *discordtest.Server
	const thread = "1600000000000000001"
	setup := func(t *testing.T) rendertest.Env {
		fake = discordtest.New(t)
		fake.AddChannel(guild, channel, "incidents")
		limits := discord.DefaultLimits
		limits.MinEditInterval, limits.FirstSendDebounce = 50*time.Millisecond, 20*time.Millisecond
		ad, err := discord.New(discord.Config{Token: fake.Token, APIURL: fake.URL, Guilds: []string{guild}}, coretest.Logger(t),
			discord.WithLimits(limits))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ad.Close() })
		return rendertest.Env{
			Sender: ad,
			NewConv: func() string {
				fake.AddThread(channel, thread, fake.Bot.ID, "incident")
				return discord.ConvKey(guild, thread)
			},
			Flush:  ad.Sender().Flush,
			Limits: limits,
		}
	}
	rendertest.Golden(t, setup, func(string) []rendertest.Payload {
		msgs := fake.Messages(thread)
		var out []rendertest.Payload
		created := 0
		for _, c := range fake.Calls() {
			if c.Channel != thread || c.Status != 200 {
				continue
			}
			var id string
			switch c.Route {
			case discordtest.RouteCreateMessage:
				// The thread holds only the bot's messages, in the order
				// they were created.
				if created >= len(msgs) {
					t.Fatalf("%d messages created, the thread holds %d", created+1, len(msgs))
				}
				id = msgs[created].ID
				created++
			case discordtest.RouteEditMessage:
				id = path.Base(c.Path)
			default:
				continue
			}
			out = append(out, rendertest.Payload{Message: id, Method: c.Route, Body: rendertest.JSONBody(c.Body)})
		}
		return out
	})
}
