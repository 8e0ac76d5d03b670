package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/render"
)

// platform is Telegram as render sees it.
type platform struct{ a *Adapter }

var (
	_ render.Platform  = platform{}
	_ render.Typer     = platform{}
	_ render.RateKeyer = platform{}
)

// MaxText is Telegram's message limit (characters after entity parsing).
const MaxText = 4096

func (p platform) Limits() render.Limits {
	return render.Limits{
		MaxText:           MaxText,
		MinEditInterval:   p.a.cfg.MinEditInterval,
		FirstSendDebounce: p.a.cfg.FirstSendDebounce,
		MaxButtonData:     64,
	}
}

// RateKey: Telegram limits per chat, whatever conversation of it posts.
func (p platform) RateKey(conv string) string {
	if chat, err := chatOf(conv); err == nil {
		return "chat:" + strconv.FormatInt(chat, 10)
	}
	return conv
}

// format returns the text and parse mode for m.
func format(m render.Message) (string, string) {
	if m.Plain {
		return m.Text, ""
	}
	h := toHTML(m.Text)
	if strings.TrimSpace(h) == "" {
		return m.Text, ""
	}
	return h, tgbotapi.ModeHTML
}

func keyboard(bs []render.Button) *tgbotapi.InlineKeyboardMarkup {
	if len(bs) == 0 {
		return nil
	}
	row := make([]tgbotapi.InlineKeyboardButton, len(bs))
	for i, b := range bs {
		row[i] = tgbotapi.NewInlineKeyboardButtonData(b.Label, b.Data)
	}
	kb := tgbotapi.NewInlineKeyboardMarkup(row)
	return &kb
}

func (p platform) Post(ctx context.Context, conv string, m render.Message) (render.MsgRef, error) {
	chat, err := chatOf(conv)
	if err != nil {
		return "", render.Rejected(err)
	}
	text, mode := format(m)
	cfg := tgbotapi.NewMessage(chat, text)
	cfg.ParseMode = mode
	cfg.DisableWebPagePreview = true
	if kb := keyboard(m.Buttons); kb != nil {
		cfg.ReplyMarkup = kb
	}
	root := replyTo(conv)
	if root != 0 {
		cfg.ReplyToMessageID = root
		cfg.AllowSendingWithoutReply = true
	}
	sent, err := p.a.bot(ctx).Send(cfg)
	if err != nil {
		return "", p.a.classify("send message", err)
	}
	if root != 0 {
		p.a.replies.put(chat, sent.MessageID, conv)
	}
	return render.MsgRef(strconv.Itoa(sent.MessageID)), nil
}

func (p platform) Edit(ctx context.Context, conv string, ref render.MsgRef, m render.Message) error {
	chat, err := chatOf(conv)
	if err != nil {
		return render.Rejected(err)
	}
	id, err := strconv.Atoi(string(ref))
	if err != nil {
		return render.Rejected(fmt.Errorf("telegram: message ref %q: %w", ref, err))
	}
	text, mode := format(m)
	cfg := tgbotapi.NewEditMessageText(chat, id, text)
	cfg.ParseMode = mode
	cfg.DisableWebPagePreview = true
	// Without reply_markup Telegram removes the keyboard, which is what a
	// message without buttons means.
	cfg.ReplyMarkup = keyboard(m.Buttons)
	if _, err := p.a.bot(ctx).Send(cfg); err != nil && !notModified(err) {
		return p.a.classify("edit message", err)
	}
	return nil
}

func (p platform) Typing(ctx context.Context, conv string) error {
	chat, err := chatOf(conv)
	if err != nil {
		return err
	}
	_, err = p.a.request(ctx, "send chat action", tgbotapi.NewChatAction(chat, tgbotapi.ChatTyping))
	return err
}
