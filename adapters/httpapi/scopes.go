package httpapi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scopes of a token (docs/design.md §17): what it may do. What it may see is the
// person's visibility, whatever the scopes.
const (
	// ScopeRead reads the conversations the person may see, their events
	// and audit entries, the approvals list, schedules, memory search and
	// the person's own tokens.
	ScopeRead = "read"
	// ScopeWrite posts messages and stops runs.
	ScopeWrite = "write"
	// ScopeApprove decides approvals (the policy still decides who may),
	// and stops runs: approvers may press Stop (policy.MayStop).
	ScopeApprove = "approve"
	// ScopeHook only reaches POST /hooks/…; nothing under /api/v1.
	ScopeHook = "hook"
	// ScopeAdmin sees every conversation, the whole audit and every
	// token, as the policy's role admin does; it includes read.
	ScopeAdmin = "admin"
)

// Scopes are the scope names, in the order they are shown.
var Scopes = []string{ScopeRead, ScopeWrite, ScopeApprove, ScopeHook, ScopeAdmin}

// DefaultScopes are a new token's scopes when none are given; tokens made
// before scopes existed have them too.
var DefaultScopes = []string{ScopeRead, ScopeWrite, ScopeApprove}

// DefaultExpiry is how long a new token works when no expiry is given.
const DefaultExpiry = 90 * 24 * time.Hour

// ParseScopes reads a comma-separated list of scopes ("read,write"): each
// known, each once, in the order of Scopes.
func ParseScopes(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(Scopes, f) {
			return nil, fmt.Errorf("unknown scope %q (scopes: %s)", f, strings.Join(Scopes, ", "))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return slices.Index(Scopes, a) - slices.Index(Scopes, b) })
	return out, nil
}

// ParseExpiry reads --expires: a Go duration ("2s", "36h"), a number of
// days ("90d") or "never" (0, false). A duration must be positive.
func ParseExpiry(s string) (d time.Duration, expires bool, err error) {
	if s == "never" {
		return 0, false, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100*365 {
			return 0, false, fmt.Errorf("invalid expiry %q: want a number of days such as 90d, a duration such as 36h, or never", s)
		}
		return time.Duration(n) * 24 * time.Hour, true, nil
	}
	d, err = time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, false, fmt.Errorf("invalid expiry %q: want a duration such as 2s or 36h, a number of days such as 90d, or never", s)
	}
	return d, true, nil
}

// hasScope reports whether scopes grant want; admin includes read.
func hasScope(scopes []string, want string) bool {
	return slices.Contains(scopes, want) || want == ScopeRead && slices.Contains(scopes, ScopeAdmin)
}

// apiScopes are the scopes that reach anything under /api/v1.
func apiScopes(scopes []string) bool {
	for _, s := range scopes {
		if s != ScopeHook {
			return true
		}
	}
	return false
}
