package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"
	"github.com/opsgate/opsgate/adapters/render"
	"github.com/opsgate/opsgate/core"
)

// Discord JSON error codes the adapter acts on.
const (
	codeThreadExists = 160004 // a thread was already started from the message
	codeAlreadyAcked = 40060  // the interaction was answered before
)

// classify wraps a discordgo error for render: a 429 is a rate limit with
// Discord's retry_after; any other 4xx is a definitive refusal (nothing
// happened); the rest (timeouts, 5xx, a cut connection) is ambiguous.
func classify(op string, err error) error {
	wrapped := fmt.Errorf("discord: %s: %w", op, err)
	if d, ok := retryAfter(err); ok {
		return render.RateLimited(d, false, wrapped)
	}
	if status := httpStatus(err); status >= 400 && status < 500 {
		return render.Rejected(wrapped)
	}
	return wrapped
}

// retryAfter reports whether err is a 429, and how long Discord asked to wait.
func retryAfter(err error) (time.Duration, bool) {
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) && rl.RateLimit != nil && rl.TooManyRequests != nil {
		return rl.RetryAfter, true
	}
	if httpStatus(err) == http.StatusTooManyRequests {
		return time.Second, true // a 429 whose body discordgo could not read
	}
	return 0, false
}

func httpStatus(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Response != nil {
		return re.Response.StatusCode
	}
	return 0
}

// apiCode returns Discord's JSON error code of err, or 0.
func apiCode(err error) int {
	var re *discordgo.RESTError
	if errors.As(err, &re) && re.Message != nil {
		return re.Message.Code
	}
	return 0
}

// withRetry runs f, waiting out up to three 429s. discordgo's own retry is
// off because it sleeps without limit and ignores contexts.
func withRetry(ctx context.Context, f func() error) error {
	for attempt := 0; ; attempt++ {
		err := f()
		d, limited := retryAfter(err)
		if !limited || attempt == 3 {
			return err
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// fatal explains gateway failures that retrying cannot fix.
func fatal(err error) error {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		switch ce.Code {
		case 4004:
			return fmt.Errorf("discord: the gateway refused the bot token (check discord.token): %w", err)
		case 4013, 4014:
			return fmt.Errorf("discord: the gateway refused the intents: enable the Message Content intent under "+
				"Bot → Privileged Gateway Intents in the Discord developer portal: %w", err)
		case 4010, 4011, 4012:
			return fmt.Errorf("discord: the gateway refused the connection: %w", err)
		}
	}
	if errors.Is(err, discordgo.ErrUnauthorized) || httpStatus(err) == http.StatusUnauthorized {
		return fmt.Errorf("discord: Discord refused the bot token (check discord.token): %w", err)
	}
	return nil
}

func who(a core.Actor) string {
	if s := a.String(); s != "" {
		return s
	}
	return "someone"
}

// User-facing texts.
const (
	textNotHere    = "Sorry, I only work in the channels I am configured for (discord.guilds / discord.channels)."
	textNotAllowed = "Sorry, you are not allowed to use opsgate in direct messages (discord.allowed_users)."
	textEmpty      = "👋 Tell me what you need, e.g. `@opsgate why are the web pods restarting?`"
	textNotTaken   = "⚠️ I could not take that message (opsgate is restarting or its store is unavailable). Please send it again."
	textNoThread   = "⚠️ I could not open a thread for this request. I need the Create Public Threads and " +
		"Send Messages in Threads permissions in this channel."
	textNothingToStop = "Nothing is running here."
	textLookupFailed  = "⚠️ I could not check where this was sent. Please try again."
)
