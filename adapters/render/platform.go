package render

import (
	"context"
	"time"
)

// Platform is what render needs from a chat platform. Conversation keys are
// core conversation keys ("telegram:<bot>:<chat>", "slack:<team>:<channel>:<ts>"):
// the platform knows how to find the chat (and thread) in them.
//
// Render calls a Platform from one goroutine per conversation, so calls for
// one conversation never overlap; calls for different conversations may run
// concurrently. Every method must return when ctx ends.
//
// Errors should be classified with [Error] (see [RateLimited],
// [FormattingRejected], [Rejected]); an unclassified error is treated as
// ambiguous: the call may or may not have taken effect.
type Platform interface {
	// Limits returns the platform's constants. It is called once.
	Limits() Limits
	// Post sends a new message to the conversation and returns its reference.
	Post(ctx context.Context, conv string, m Message) (MsgRef, error)
	// Edit replaces the text and the buttons of a message sent by Post; a
	// message without buttons has its buttons removed. An edit that changes
	// nothing must succeed (render skips identical edits it knows about, but
	// cannot know everything, e.g. after a retry).
	Edit(ctx context.Context, conv string, ref MsgRef, m Message) error
}

// Typer is implemented by platforms that can show a "typing…" indicator.
// Failures are ignored.
type Typer interface {
	Typing(ctx context.Context, conv string) error
}

// RateKeyer is implemented by platforms whose rate limits apply to something
// other than the conversation key (Telegram limits per chat, and several
// conversations can share a chat over time). The default key is conv.
type RateKeyer interface {
	RateKey(conv string) string
}

// Limits are a platform's constants.
type Limits struct {
	// MaxText is the longest message text, in UTF-16 code units of the
	// Markdown source (which is never shorter than what the user sees).
	MaxText int
	// MinEditInterval is the least time between two calls for one draft
	// (per conversation). Telegram and Slack: 1 s; Discord: 1.2 s.
	MinEditInterval time.Duration
	// FirstSendDebounce is how long the first tokens wait before the draft is
	// posted, so the first message is not a single word.
	FirstSendDebounce time.Duration
	// MaxButtonData is the longest button payload in bytes (Telegram 64,
	// Discord 100). Zero means 64.
	MaxButtonData int
}

// MsgRef identifies a message within its conversation; only the platform
// interprets it (Telegram: the message id, Slack: the ts).
type MsgRef string

// Message is what render asks a platform to show.
type Message struct {
	// Text is Markdown as language models write it; the platform converts it
	// to its own format, unless Plain is set.
	Text string
	// Plain asks for Text as it is, without any formatting. Render sets it
	// after the platform rejected the formatted text (FormattingRejected).
	Plain bool
	// Buttons form one row under the message; none means no buttons.
	Buttons []Button
}

// Equal reports whether m and o would look the same.
func (m Message) Equal(o Message) bool {
	if m.Text != o.Text || m.Plain != o.Plain || len(m.Buttons) != len(o.Buttons) {
		return false
	}
	for i := range m.Buttons {
		if m.Buttons[i] != o.Buttons[i] {
			return false
		}
	}
	return true
}

// Button is a clickable button. Data comes back with the click; it is at
// most Limits.MaxButtonData bytes (see [ButtonData]).
type Button struct {
	Label string
	Data  string
	Style ButtonStyle
}

// ButtonStyle is a hint; platforms without styles ignore it.
type ButtonStyle int

// Button styles.
const (
	StyleDefault ButtonStyle = iota
	StylePrimary
	StyleDanger
)
