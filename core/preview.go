package core

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// PreviewStatus is how far the preview of an approval got.
type PreviewStatus string

// Preview states (docs/design.md §18).
const (
	// PreviewPending: the card is posted; the preview is being worked out.
	PreviewPending PreviewStatus = "pending"
	// PreviewReady: Summary and Diff say what the call would change.
	PreviewReady PreviewStatus = "ready"
	// PreviewNone: there is no preview; Why says why ("timed out").
	PreviewNone PreviewStatus = "none"
)

// PreviewTimeout is how long a preview may take; a slower one is shown as
// "no preview: timed out" (docs/design.md §18).
const PreviewTimeout = 5 * time.Second

// Preview is what an approval's call would change, worked out before
// anyone decides, with reads only (docs/design.md §18).
type Preview struct {
	Status PreviewStatus `json:"status"`
	// Summary is one line: "replicas: 2 → 3", "new file, 12 lines".
	Summary string `json:"summary,omitempty"`
	// Diff is the whole diff, one change per line ("-", "+" or " "
	// prefixed); chat cards show its first lines.
	Diff string `json:"diff,omitempty"`
	// Why says why there is no preview (PreviewNone), or the error the
	// server gave for a dry-run (an API server's validation error).
	Why string `json:"why,omitempty"`
	// Hash is the hex SHA-256 of what the preview compared (for a
	// Kubernetes object its fields without status, resourceVersion,
	// managedFields, generation, uid and timestamps). Empty when there is
	// nothing to read again: such a preview is never checked for
	// staleness.
	Hash string `json:"hash,omitempty"`
	// Changed is set on a request asked again because its object changed
	// after an earlier approval: what changed since then.
	Changed string `json:"changed,omitempty"`
	// Stale is set on an approved request that was not run because its
	// object changed since: why, and that a new request asks again.
	Stale string `json:"stale,omitempty"`
}

// Previewer works out previews for approval cards. Implementations live
// outside core (core/tools/preview); the engine calls it in the
// background after a card is posted, and again right before an approved
// call runs, to see whether what it showed is still true.
//
// Previews only reads: it calls read tools or a dry-run the server
// documents, never the call itself. It must be safe for concurrent use.
type Previewer interface {
	// Previews reports, without I/O, whether tool has a preview at all;
	// a card for a tool without one says nothing about previews.
	Previews(tool Tool) bool
	// Preview works out what calling tool with args would change. ctx
	// carries the deadline (PreviewTimeout). An error means no preview:
	// its text is shown as "no preview: <error>".
	Preview(ctx context.Context, tool Tool, args json.RawMessage) (Preview, error)
}

// ApprovalPreview is a preview to store with its approval (Batch.Previews).
type ApprovalPreview struct {
	ApprovalID string
	Preview    Preview
}

// noPreview is the preview shown when the previewer failed.
func noPreview(err error) Preview {
	why := err.Error()
	if errors.Is(err, context.DeadlineExceeded) {
		why = "timed out"
	}
	return Preview{Status: PreviewNone, Why: why}
}
