package core

import "errors"

// Kind is what an error means to the person who meets it, whatever the
// surface: the chats' replies, the terminal's lines, the HTTP API's status
// and code, and the metrics' labels are all read from one table (kindTable)
// by the error's kind, so a refusal means the same thing everywhere
// (docs/design.md §3). Read it with KindOf.
type Kind uint8

// The kinds. The zero value, KindInternal, is what an error of no kind is.
const (
	// KindInternal: something failed inside opsgate (a store, the network);
	// what failed is logged, not shown.
	KindInternal Kind = iota
	// KindInvalid: the input is not valid (a policy file, a request).
	KindInvalid
	// KindNotFound: the conversation, run, approval or document does not
	// exist, or no longer does.
	KindNotFound
	// KindNotAllowed: the person may not do this (decide an approval).
	KindNotAllowed
	// KindAlreadyDecided: an approval was decided before.
	KindAlreadyDecided
	// KindAlreadyVoted: the person's vote is already counted.
	KindAlreadyVoted
	// KindExpired: an approval passed its expiry; it counts as denied.
	KindExpired
	// KindHashMismatch: what is decided or run is not what was shown or
	// proposed (an action hash, a document's sha256).
	KindHashMismatch
	// KindRateLimited: the person started too many runs; nothing started.
	KindRateLimited
	// KindShuttingDown: opsgate no longer takes messages; send it again.
	KindShuttingDown

	numKinds
)

// KindInfo is a kind's row of the table: everything a surface says about
// an error of the kind.
type KindInfo struct {
	// Label names the kind in metrics and logs (opsgate_approval_clicks_total's
	// result), e.g. "not_allowed".
	Label string
	// Code is the HTTP API's error code ({"error": {"code": …}}); it
	// differs from Label only where the API's contract named it first.
	Code string
	// Status is the HTTP API's status code.
	Status int
	// Alert asks a chat to make the reply prominent (an alert, a warning),
	// not a quiet acknowledgement: the person did not get what they asked.
	Alert bool
	// Mark is the symbol a chat reply starts with, if any.
	Mark string
	// Text is the kind's one description, a clause in plain text (surfaces
	// capitalise, escape and add what only they know, e.g. who decided).
	Text string
}

// kindTable is the one table. HTTP statuses are numbers: core does not
// import net/http.
var kindTable = [numKinds]KindInfo{
	KindInternal:       {Label: "error", Code: "internal", Status: 500, Alert: true, Mark: "⚠️", Text: "something failed inside opsgate; try again (its log says why)"},
	KindInvalid:        {Label: "invalid", Code: "invalid", Status: 400, Alert: true, Mark: "⚠️", Text: "the input is not valid; nothing was changed"},
	KindNotFound:       {Label: "not_found", Code: "not_found", Status: 404, Alert: true, Text: "it no longer exists, or never did"},
	KindNotAllowed:     {Label: "not_allowed", Code: "forbidden", Status: 403, Alert: true, Mark: "⛔", Text: "you are not allowed to decide this request"},
	KindAlreadyDecided: {Label: "already_decided", Code: "already_decided", Status: 409, Text: "this request was already decided"},
	KindAlreadyVoted:   {Label: "already_voted", Code: "already_voted", Status: 409, Text: "your decision on this request is already counted"},
	KindExpired:        {Label: "expired", Code: "expired", Status: 410, Alert: true, Mark: "⌛", Text: "this request expired; nothing was run"},
	KindHashMismatch:   {Label: "hash_mismatch", Code: "hash_mismatch", Status: 409, Alert: true, Mark: "⛔", Text: "the action changed since it was shown; nothing was run"},
	KindRateLimited:    {Label: "rate_limited", Code: "rate_limited", Status: 429, Alert: true, Mark: "⏳", Text: "too many runs were started in the last minute; nothing was started"},
	KindShuttingDown:   {Label: "shutting_down", Code: "shutting_down", Status: 503, Alert: true, Mark: "⚠️", Text: "shutting down: send the message again in a moment"},
}

// Info is k's row of the table; a kind outside the table is KindInternal's.
func (k Kind) Info() KindInfo {
	if k >= numKinds {
		k = KindInternal
	}
	return kindTable[k]
}

// String is k's Label.
func (k Kind) String() string { return k.Info().Label }

// Kinds lists every kind, in table order.
func Kinds() []Kind {
	ks := make([]Kind, numKinds)
	for i := range ks {
		ks[i] = Kind(i)
	}
	return ks
}

// KindOf is the kind of err: that of the outermost error in its chain with
// a Kind method (every sentinel here, NotAllowedError, LimitError,
// policy.Error, and any package's NewKindError), else KindInternal. A nil
// err has no kind; callers say success themselves.
func KindOf(err error) Kind {
	var k interface{ Kind() Kind }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return KindInternal
}

// NewKindError returns an error of kind k whose Error is msg: a sentinel
// of a package outside core (compare with errors.Is, as any sentinel).
func NewKindError(k Kind, msg string) error { return &kindError{kind: k, msg: msg} }

type kindError struct {
	kind Kind
	msg  string
}

func (e *kindError) Error() string { return e.msg }

// Kind makes KindOf read e.
func (e *kindError) Kind() Kind { return e.kind }
