package telegram_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
)

// Issue 22 acceptance 4: golden files of what Telegram users see, as the
// Bot API receives it: the sendMessage and editMessageText parameters
// (HTML text, parse mode, inline keyboard) of approval cards in every
// state, drafts and tool lines (testdata/golden; -update rewrites them).
func TestCardsDraftsAndToolLinesGolden(t *testing.T) {
	var tg *telegramtest.Server
	setup := func(t *testing.T) rendertest.Env {
		ad, fake := newSenderOnly(t, 20*time.Millisecond, 10*time.Millisecond)
		tg = fake
		chat := int64(5000)
		return rendertest.Env{
			Sender:  ad.Sender(),
			NewConv: func() string { chat++; return telegram.ConvKey(telegramtest.BotID, chat, "") },
			Flush:   ad.Sender().Flush,
			Limits:  render.Limits{MaxText: telegram.MaxText, MaxButtonData: 64},
		}
	}
	rendertest.Golden(t, setup, func(conv string) []rendertest.Payload {
		chat := chatOfKey(t, conv)
		var out []rendertest.Payload
		sent := 0
		for _, c := range tg.Calls() {
			if c.Chat() != chat || c.Code != 200 {
				continue
			}
			var id string
			switch c.Method {
			case "sendMessage":
				// The fake numbers a chat's messages from 1, as they are sent.
				sent++
				id = strconv.Itoa(sent)
			case "editMessageText", "editMessageReplyMarkup":
				id = c.Params.Get("message_id")
			default:
				continue
			}
			out = append(out, rendertest.Payload{Message: id, Method: c.Method, Body: rendertest.FormBody(c.Params, "chat_id", "message_id")})
		}
		return out
	})
}
