package terminal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Terminal conversations have keys "terminal:<user>:<id>": the OS user,
// escaped so that it holds no ':' (a user's prefix never matches another
// user's keys), and an id that is either generated (NewConvID) or a name the
// user chose (CheckConvName). Generated ids are valid names, so
// `--conversation ID` continues any conversation the banner named.

// MaxConvName is the longest conversation name.
const MaxConvName = 64

// ConvPrefix returns the key prefix of user's terminal conversations.
func ConvPrefix(user string) string {
	var b strings.Builder
	b.WriteString("terminal:")
	for i := 0; i < len(user); i++ {
		c := user[i]
		if isNameByte(c) || c == '@' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	b.WriteByte(':')
	return b.String()
}

// ConvKey returns the key of user's conversation id.
func ConvKey(user, id string) string { return ConvPrefix(user) + id }

// ConvID returns the id part of a terminal conversation key.
func ConvID(key string) string { return key[strings.LastIndexByte(key, ':')+1:] }

// NewConvID returns a fresh conversation id: the UTC time, so that ids sort
// by age, then random hex, so that two sessions started in the same second
// differ: 20260102-150405-9f3a1c.
func NewConvID(now time.Time) string {
	var r [3]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(r[:])
}

// CheckConvName validates a conversation name (opsgate chat --conversation):
// 1 to MaxConvName letters, digits, '-', '_' or '.'.
func CheckConvName(name string) error {
	if name == "" || len(name) > MaxConvName {
		return fmt.Errorf("terminal: conversation name %q: want 1 to %d characters", name, MaxConvName)
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return fmt.Errorf("terminal: conversation name %q: only letters, digits, '-', '_' and '.' are allowed", name)
		}
	}
	return nil
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

// Choice is the conversation `opsgate chat` starts in.
type Choice struct {
	Key  string
	How  string // "new", "resumed", "continued"
	Note string // something the user should know about the choice
}

// Keys lists the keys of the stored conversations under a prefix, the most
// recently active first (core.Engine.ConversationKeys).
type Keys func(ctx context.Context, prefix string) ([]string, error)

// ChooseConversation picks the conversation of user: the named one, the
// most recent one (resume), else a new one.
func ChooseConversation(ctx context.Context, keys Keys, user string, resume bool, name string) (Choice, error) {
	fresh := Choice{Key: ConvKey(user, NewConvID(time.Now())), How: "new"}
	switch {
	case name != "":
		key := ConvKey(user, name)
		ks, err := keys(ctx, key)
		if err != nil {
			return Choice{}, fmt.Errorf("chat: conversation %s: %w", name, err)
		}
		if slices.Contains(ks, key) {
			return Choice{Key: key, How: "continued"}, nil
		}
		return Choice{Key: key, How: "new"}, nil
	case resume:
		ks, err := keys(ctx, ConvPrefix(user))
		if err != nil {
			return Choice{}, fmt.Errorf("chat: find the conversation to resume: %w", err)
		}
		if len(ks) == 0 {
			fresh.Note = "no earlier terminal conversation to resume; starting a new one"
			return fresh, nil
		}
		return Choice{Key: ks[0], How: "resumed"}, nil
	}
	return fresh, nil
}

// Banner says which conversation is in use and how to come back to it.
func (c Choice) Banner() string {
	id := Sanitize(ConvID(c.Key))
	s := fmt.Sprintf("conversation %s (%s; `opsgate chat --conversation %s` continues it)", id, c.How, id)
	if c.Note != "" {
		s = c.Note + "\n" + s
	}
	return s
}
