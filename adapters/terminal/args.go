package terminal

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// Lengths of argument summaries: a status line must fit a terminal line
// (and be redrawn); an approval question may take more, to tell two calls
// of one tool apart.
const (
	statusArgs = 60
	promptArgs = 100
	argValue   = 30 // one value, cut in the middle
)

// argSummary renders tool arguments compactly, safe to print:
// " namespace=prod replicas=3", keys sorted, at most max characters. A long
// value keeps its start and its end ("/srv/app/con…/settings.yaml"), where
// paths and names tend to differ.
func argSummary(raw json.RawMessage, max int) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return " " + oneLine(string(raw), max)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = elide(flat(k), argValue) + "=" + elide(flat(renderValue(obj[k])), argValue)
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + oneLine(strings.Join(parts, " "), max)
}

// renderValue shows a string bare when that is unambiguous, anything else
// as compact JSON.
func renderValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		if s == "" || strings.ContainsAny(s, " \t\n=") {
			b, _ := json.Marshal(s)
			return string(b)
		}
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) == nil {
		return buf.String()
	}
	return string(v)
}

// elide cuts s to max characters by replacing its middle with "…".
func elide(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	head := (max - 1) / 2
	tail := max - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}
