package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/memory/docs"
)

// Where documents are: the scopes a tool call may name and see, and the
// lookups by id or path within them.

// scopeOf is the scope of kind ("conversation", "channel", "user",
// "workspace") that a conversation and person write to and read from.
func scopeOf(kind, convKey, person string) (docs.Scope, error) {
	switch docs.ScopeKind(kind) {
	case docs.Workspace:
		return docs.WorkspaceScope, nil
	case docs.Channel:
		if convKey == "" {
			return docs.Scope{}, errors.New("this conversation has no channel")
		}
		return docs.Scope{Kind: docs.Channel, Key: ChannelOf(convKey)}, nil
	case docs.User:
		if person == "" {
			return docs.Scope{}, errors.New("this conversation has no person to keep user memory for")
		}
		return docs.Scope{Kind: docs.User, Key: person}, nil
	case docs.Conversation:
		if convKey == "" {
			return docs.Scope{}, errors.New("no conversation")
		}
		return docs.Scope{Kind: docs.Conversation, Key: convKey}, nil
	}
	return docs.Scope{}, fmt.Errorf("scope %q: want conversation, channel, user or workspace", kind)
}

// narrowestFirst orders a conversation's visible scopes for resolving a
// path: its own notes shadow the person's, the channel's and the
// workspace's.
func narrowestFirst(scopes []docs.Scope) []docs.Scope {
	rank := map[docs.ScopeKind]int{docs.Conversation: 0, docs.User: 1, docs.Channel: 2, docs.Workspace: 3}
	out := slices.Clone(scopes)
	slices.SortStableFunc(out, func(a, b docs.Scope) int { return rank[a.Kind] - rank[b.Kind] })
	return out
}

// argError is a bad argument found after decoding.
type argError struct{ msg string }

func (e argError) Error() string { return e.msg }

func badArg(format string, args ...any) error { return argError{fmt.Sprintf(format, args...)} }

// errNoDoc is a document the caller cannot see, whether or not it exists.
type errNoDoc struct{ what string }

func (e errNoDoc) Error() string {
	return "no memory document " + e.what + " in the memory this conversation sees"
}

// lookup finds the documents a path (in scope kind, or in any visible
// scope, narrowest first) or an id names among the visible scopes. The
// error is errNoDoc, a bad argument, or the store's.
func (m *Memory) lookup(ctx context.Context, visible []docs.Scope, id, p, kind string) ([]docs.Document, error) {
	switch {
	case id != "" && p != "":
		return nil, badArg("give path or id, not both")
	case id != "":
		d, err := m.store.Document(ctx, id)
		if errors.Is(err, docs.ErrNotFound) || err == nil && !slices.Contains(visible, d.Scope) {
			return nil, errNoDoc{fmt.Sprintf("with id %q", id)}
		}
		if err != nil {
			return nil, err
		}
		return []docs.Document{d}, nil
	case p == "":
		return nil, badArg("give path or id")
	}
	scopes := narrowestFirst(visible)
	if kind != "" {
		var keep []docs.Scope
		for _, s := range scopes {
			if string(s.Kind) == kind {
				keep = append(keep, s)
			}
		}
		if len(keep) == 0 {
			return nil, badArg("scope %q: this conversation sees %s", kind, scopeKinds(visible))
		}
		scopes = keep
	}
	var out []docs.Document
	for _, s := range scopes {
		d, err := m.store.DocumentAt(ctx, s, p)
		if errors.Is(err, docs.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		what := fmt.Sprintf("at %q", p)
		if kind != "" {
			what += " in " + kind + " memory"
		}
		return nil, errNoDoc{what}
	}
	return out, nil
}

func scopeKinds(scopes []docs.Scope) string {
	var ks []string
	for _, s := range narrowestFirst(scopes) {
		ks = append(ks, string(s.Kind))
	}
	return strings.Join(ks, ", ")
}

// lookupFailed is lookup's error as a tool result.
func (m *Memory) lookupFailed(c core.VirtualCall, tool string, err error) core.ToolResult {
	var nd errNoDoc
	if errors.As(err, &nd) {
		return failf("%v; use memory_search or memory_list to find it", err)
	}
	var ae argError
	if errors.As(err, &ae) {
		return failf("invalid arguments for %s: %v; nothing was done", tool, err)
	}
	return m.storeFailed(c, tool, err)
}

// memRef names d in events.
func memRef(d docs.Document, score float64) core.MemoryRef {
	return core.MemoryRef{ID: d.ID, Path: d.Path, Type: string(d.Type), Trust: string(d.Trust), Trusted: Trusted(d), Score: score}
}

// label is how a document is named to the model: its path and the kind
// of its scope.
func label(d docs.Document) string { return d.Path + " (" + string(d.Scope.Kind) + ")" }
