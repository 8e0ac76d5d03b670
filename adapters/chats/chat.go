package chats

import (
	"context"
	"net/http"

	"github.com/opsgate/opsgate/core"
)

// Engine is what a chat adapter calls on the engine (*core.Engine, as [As]
// hands it over). Its methods are safe for concurrent use.
type Engine interface {
	// Handle stores and starts (queues, steers) a user message; a
	// redelivered MessageID is ignored.
	Handle(ctx context.Context, in core.Inbound) error
	// Stop stops the conversation's run and cancels its approvals; it
	// reports whether there was anything to stop.
	Stop(ctx context.Context, convKey string) bool
	// Decide answers an approval request: core.ErrNotAllowed (audited),
	// ErrAlreadyDecided, ErrExpired, ErrNotFound, ErrHashMismatch.
	Decide(ctx context.Context, d core.Decision) (core.Approval, error)
	// Status describes a conversation.
	Status(ctx context.Context, convKey string) (core.Status, error)
}

// Keeper is an ability of an Engine that keeps conversations an adapter
// starts itself (*core.Engine has it): Telegram's /new stores the new
// conversation at once, and after a restart a chat continues the newest.
type Keeper interface {
	// StartConversation stores the conversation, creating it when missing.
	StartConversation(ctx context.Context, key string) error
	// ConversationKeys returns the keys of the stored conversations under
	// prefix, the most recently active first.
	ConversationKeys(ctx context.Context, prefix string) ([]string, error)
}

// Chat is what every chat adapter does. Construction checks the
// configuration only; Run does the work; Close releases.
type Chat interface {
	// Send renders an event of a conversation the adapter owns; it must
	// not block on the platform (core.EventSender).
	core.EventSender
	// Platform names the platform: the prefix of its conversation keys,
	// of its people's identities and of its notify and schedule targets
	// ("telegram").
	Platform() string
	// Owns reports whether a conversation key is the adapter's.
	Owns(convKey string) bool
	// Run receives from the platform until ctx ends, handing what people
	// say and click to e. It returns nil when ctx ends, an error when the
	// platform refuses the adapter for good (a revoked token).
	Run(ctx context.Context, e Engine) error
	// Close delivers what is still pending and releases connections; call
	// it after Run returned and the engine shut down.
	Close() error
}

// Healther is an adapter that reports its connection to its platform
// (/readyz). An adapter without it counts as connected.
type Healther interface {
	Health() (ok bool, detail string)
}

// Notifier is an adapter that shows an approval's card at a policy's
// notify target on its platform (where: the part after "platform:"), in a
// conversation of its own whose buttons decide the request.
type Notifier interface {
	Notify(ctx context.Context, where string, a core.Approval) error
}

// Threader is an adapter that can post text as a new message at where (a
// channel or a chat) and return the conversation that follows it; title
// names the thread where the platform names threads. Schedules fire there.
type Threader interface {
	StartThread(ctx context.Context, where, text, title string) (convKey string, err error)
}

// Leased is an adapter whose Run must run on one replica at a time (a
// poller, a gateway session): Lease names the lease, "" when it needs none
// (a webhook).
type Leased interface {
	Lease() string
}

// Preparer is an adapter that can start, before the engine exists, what
// its Run does first and needs no engine (asking the platform who the bot
// is, setting its commands). serve calls Prepare while it opens the store,
// so that the two overlap; Run waits for it.
type Preparer interface {
	Prepare(ctx context.Context)
}

// Router is an adapter that receives over HTTP on server.listen (webhooks,
// Slack's HTTP mode): Routes returns its handlers by ServeMux pattern,
// handing what they receive to e; nil when it receives otherwise.
type Router interface {
	Routes(e Engine) map[string]http.Handler
}

// HealthOf returns c's health, or "connected" when c cannot tell.
func HealthOf(c Chat) (ok bool, detail string) {
	if h, ok := c.(Healther); ok {
		return h.Health()
	}
	return true, "no health check"
}
