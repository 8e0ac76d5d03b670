package telegram_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/adapters/render/rendertest"
	"github.com/opsgate/opsgate/adapters/telegram"
	"github.com/opsgate/opsgate/adapters/telegram/telegramtest"
)

// newSenderOnly returns an adapter whose sender posts to a fresh fake.
func newSenderOnly(t testing.TB, edit, debounce time.Duration) (*telegram.Adapter, *telegramtest.Server) {
	tg := telegramtest.New(t)
	ad, err := telegram.New(telegram.Config{
		Token: telegramtest.Token, APIURL: tg.URL, AllowedUsers: []int64{alice.ID},
		MinEditInterval: edit, FirstSendDebounce: debounce,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ad.Close() })
	return ad, tg
}

func chatOfKey(t *testing.T, conv string) int64 {
	parts := strings.Split(conv, ":")
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		t.Fatalf("conversation key %q: %v", conv, err)
	}
	return id
}

func TestSenderConformance(t *testing.T) {
	rendertest.Run(t, func(t *testing.T) rendertest.Env {
		ad, tg := newSenderOnly(t, 20*time.Millisecond, 10*time.Millisecond)
		chat := int64(5000)
		return rendertest.Env{
			Sender:  ad.Sender(),
			NewConv: func() string { chat++; return telegram.ConvKey(telegramtest.BotID, chat, "") },
			Flush:   ad.Sender().Flush,
			Messages: func(conv string) []rendertest.Message {
				var out []rendertest.Message
				for _, m := range tg.Messages(chatOfKey(t, conv)) {
					rm := rendertest.Message{ID: strconv.Itoa(m.ID), Text: m.Visible}
					for _, b := range m.Buttons {
						rm.Buttons = append(rm.Buttons, render.Button{Label: b.Text, Data: b.Data})
					}
					out = append(out, rm)
				}
				return out
			},
			Calls: func(conv string) rendertest.Calls {
				chat := chatOfKey(t, conv)
				var c rendertest.Calls
				for _, call := range tg.Calls() {
					if call.Chat() != chat || call.Code != 200 {
						continue
					}
					switch call.Method {
					case "sendMessage":
						c.Posts++
					case "editMessageText":
						c.Edits++
					}
				}
				return c
			},
			Limits: render.Limits{MaxText: telegram.MaxText, MaxButtonData: 64},
		}
	})
}
