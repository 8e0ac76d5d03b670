package discord_test

import (
	"fmt"
	"testing"

	"github.com/opsgate/opsgate/adapters/discord"
	"github.com/opsgate/opsgate/adapters/discord/discordtest"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/core/coretest"
)

// The sender conformance suite, against the Discord fake's REST API with
// Discord's own limits.
func TestSenderConformance(t *testing.T) {
	t.Parallel()
	rendertest.Run(t, func(t *testing.T) rendertest.Env {
		fake := discordtest.New(t)
		fake.AddChannel(guild, channel, "incidents")
		ad, err := discord.New(discord.Config{Token: fake.Token, APIURL: fake.URL, Guilds: []string{guild}}, coretest.Logger(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := ad.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			checkWriteRate(t, fake.Calls())
		})
		n := 0
		threads := map[string]string{}
		return rendertest.Env{
			Sender: ad,
			NewConv: func() string {
				n++
				id := fmt.Sprintf("%d", 1600000000000000000+n)
				fake.AddThread(channel, id, fake.Bot.ID, "incident")
				key := discord.ConvKey(guild, id)
				threads[key] = id
				return key
			},
			Flush: ad.Sender().Flush,
			Messages: func(conv string) []rendertest.Message {
				var out []rendertest.Message
				for _, m := range fake.Messages(threads[conv]) {
					out = append(out, rendertest.Message{ID: m.ID, Text: render.PlainText(m.Content), Buttons: renderButtons(m.Buttons)})
				}
				return out
			},
			Calls: func(conv string) rendertest.Calls {
				var c rendertest.Calls
				for _, call := range fake.Calls() {
					if call.Channel != threads[conv] || call.Status != 200 {
						continue
					}
					switch call.Route {
					case discordtest.RouteCreateMessage:
						c.Posts++
					case discordtest.RouteEditMessage:
						c.Edits++
					}
				}
				return c
			},
			Limits: discord.DefaultLimits,
		}
	})
}

func renderButtons(bs []discordtest.Button) []render.Button {
	var out []render.Button
	for _, b := range bs {
		style := render.StyleDefault
		switch b.Style {
		case 3:
			style = render.StylePrimary
		case 4:
			style = render.StyleDanger
		}
		out = append(out, render.Button{Label: b.Label, Data: b.CustomID, Style: style})
	}
	return out
}
