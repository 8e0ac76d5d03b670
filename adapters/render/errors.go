package render

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind says what a failed platform call means for a retry.
type ErrorKind int

// Error kinds. The zero value is KindAmbiguous, which is what an
// unclassified error means too.
const (
	// KindAmbiguous: the call may or may not have taken effect (a timeout,
	// a dropped connection). A post is not re-sent; an edit may be.
	KindAmbiguous ErrorKind = iota
	// KindRateLimited: nothing happened; try again after RetryAfter.
	KindRateLimited
	// KindFormatting: the platform rejected the formatted text; nothing
	// happened; the same text may be sent plain.
	KindFormatting
	// KindRejected: the platform refused the call for good (chat not found,
	// message deleted, bot blocked); nothing happened.
	KindRejected
)

func (k ErrorKind) String() string {
	switch k {
	case KindRateLimited:
		return "rate limited"
	case KindFormatting:
		return "formatting rejected"
	case KindRejected:
		return "rejected"
	default:
		return "ambiguous"
	}
}

// Error is a classified platform failure. Platforms return it (wrapped or
// not); render reads it with errors.As.
type Error struct {
	Kind ErrorKind
	// RetryAfter is the platform's hint for KindRateLimited.
	RetryAfter time.Duration
	// Global says the limit applies to the whole bot token, not only to
	// this conversation.
	Global bool
	Err    error
}

func (e *Error) Error() string {
	if e.Kind == KindRateLimited {
		return fmt.Sprintf("%s (retry after %s): %v", e.Kind, e.RetryAfter, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// RateLimited classifies err as a rate limit lasting d.
func RateLimited(d time.Duration, global bool, err error) error {
	return &Error{Kind: KindRateLimited, RetryAfter: d, Global: global, Err: err}
}

// FormattingRejected classifies err as a rejection of the message's
// formatting (e.g. Telegram's "can't parse entities").
func FormattingRejected(err error) error {
	return &Error{Kind: KindFormatting, Err: err}
}

// Rejected classifies err as a definitive refusal: nothing happened and
// retrying the same call will not help.
func Rejected(err error) error {
	return &Error{Kind: KindRejected, Err: err}
}

// classify returns the kind of err and, for rate limits, the details.
func classify(err error) (ErrorKind, *Error) {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind, e
	}
	return KindAmbiguous, nil
}
