package incident

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"strings"
)

// Target is one entry of incidents.targets.
type Target struct {
	// Match maps label names to globs (path.Match: * and ?); a missing
	// label does not match a glob other than "*".
	Match map[string]string
	// To is "slack:<channel>", "discord:<channel>" or "telegram:<chat>".
	To        string
	Approvers []string
	Toolsets  []string
	Triage    string
}

// Platform is the platform of t.To ("slack").
func (t Target) Platform() string { p, _, _ := strings.Cut(t.To, ":"); return p }

// Where is the channel or chat of t.To.
func (t Target) Where() string { _, w, _ := strings.Cut(t.To, ":"); return w }

// Matches reports whether labels fit every glob of t.Match.
func (t Target) Matches(labels map[string]string) bool {
	for name, glob := range t.Match {
		v, ok := labels[name]
		if !ok && glob != "*" {
			return false
		}
		if ok, _ := path.Match(glob, v); !ok {
			return false
		}
	}
	return true
}

// Route returns the index of the first target that matches one of the
// notification's alerts (first match wins), or -1.
func Route(targets []Target, n Notification) int {
	for i, t := range targets {
		for _, a := range n.Alerts {
			if t.Matches(a.Labels) {
				return i
			}
		}
	}
	return -1
}

// KeyPrefix starts every incident conversation's key.
const KeyPrefix = "incident:"

// Key is the conversation key of the seq-th incident of an alert group:
// "incident:" and 16 hex digits of a hash, the same on every replica.
func Key(groupKey string, seq int) string {
	h := sha256.Sum256([]byte(groupKey + "\x00" + itoa(seq)))
	return KeyPrefix + hex.EncodeToString(h[:8])
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// fingerprintOf identifies an alert by its labels when the sender gave no
// fingerprint.
func fingerprintOf(labels map[string]string) string {
	b, _ := json.Marshal(labels) // keys sorted
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}
