package telegram

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/core"
)

// ConvKey returns the conversation key of a chat: "telegram:<bot>:<chat>",
// with ":<n>" appended after the n-th /new.
func ConvKey(botID, chatID int64, epoch string) string {
	k := fmt.Sprintf("telegram:%d:%d", botID, chatID)
	if epoch != "" {
		k += ":" + epoch
	}
	return k
}

// chatOf returns the chat of a conversation key.
func chatOf(conv string) (int64, error) {
	parts := strings.Split(conv, ":")
	if len(parts) < 3 || parts[0] != "telegram" {
		return 0, fmt.Errorf("telegram: %q is not a telegram conversation", conv)
	}
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return 0, errors.New("telegram: conversation key without a chat id")
	}
	return id, nil
}

// ActorID is the actor id of a Telegram user. The platform prefix keeps
// ids of different platforms apart in approvals and the audit log.
func ActorID(userID int64) string { return chats.Qualify("telegram", strconv.FormatInt(userID, 10)) }

func actorOf(u *tgbotapi.User) core.Actor {
	if u == nil {
		return core.Actor{}
	}
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if u.UserName != "" {
		name = "@" + u.UserName
	}
	return core.Actor{ID: ActorID(u.ID), Name: name}
}
