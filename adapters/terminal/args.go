package terminal

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// argSummary renders tool arguments compactly for a status line:
// " namespace=prod replicas=3", keys sorted, long values cut, at most about
// sixty characters so the line fits a terminal (and can be redrawn).
func argSummary(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return " " + oneLine(string(raw), 60)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + oneLine(argValue(obj[k]), 30)
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + oneLine(strings.Join(parts, " "), 60)
}

func argValue(v json.RawMessage) string {
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
