package render

import "strings"

// Button actions carried in button data as "<action>:<id>". The id is an
// approval id (32 hex digits) or a run id; it is always looked up, never
// trusted by itself.
const (
	ActionApprove = "a"
	ActionDeny    = "d"
	ActionStop    = "s"
)

// ButtonData returns the data of a button for action on id, cut to max
// bytes (a run id that does not fit is shortened; ParseButtonData's caller
// matches it as a prefix).
func ButtonData(action, id string, max int) string {
	if max <= 0 {
		max = 64
	}
	d := action + ":" + id
	if len(d) > max {
		d = d[:max]
	}
	return d
}

// ParseButtonData splits button data made by ButtonData.
func ParseButtonData(data string) (action, id string, ok bool) {
	action, id, ok = strings.Cut(data, ":")
	if !ok || id == "" {
		return "", "", false
	}
	switch action {
	case ActionApprove, ActionDeny, ActionStop:
		return action, id, true
	}
	return "", "", false
}
