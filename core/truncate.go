package core

import "unicode/utf8"

// Measure is how a length limit counts a string. Limits differ by place:
// audit details and model-facing results are bounded in bytes, Telegram
// and Discord count characters (runes), Slack counts UTF-16 code units.
type Measure int

const (
	Bytes Measure = iota // UTF-8 bytes, Go's len
	Runes                // Unicode code points
	UTF16                // UTF-16 code units: 2 for a rune above U+FFFF
)

// String names the measure, for test messages.
func (m Measure) String() string {
	switch m {
	case Bytes:
		return "bytes"
	case Runes:
		return "runes"
	case UTF16:
		return "UTF-16 units"
	}
	return "Measure(?)"
}

// Len is s's length in m.
func (m Measure) Len(s string) int {
	switch m {
	case Bytes:
		return len(s)
	case Runes:
		return utf8.RuneCountInString(s)
	}
	n := 0
	for _, r := range s {
		n += m.rune(r, 0)
	}
	return n
}

// rune is the length in m of r, which takes size bytes of the string (an
// invalid byte decodes to utf8.RuneError of size 1, one unit once sent as
// JSON, which replaces it with U+FFFD).
func (m Measure) rune(r rune, size int) int {
	switch m {
	case Bytes:
		return size
	case UTF16:
		if r > 0xFFFF {
			return 2
		}
	}
	return 1
}

// ellipsis marks a cut.
const ellipsis = "…"

// Truncate returns s when it measures at most n in m; otherwise the
// longest prefix of s, cut on a rune boundary, that fits within n together
// with the "…" that marks the cut. (With n smaller than "…" itself, the
// result is "…" alone.)
func Truncate(s string, n int, m Measure) string {
	if m.Len(s) <= n {
		return s
	}
	room := n - m.Len(ellipsis)
	used, end := 0, 0
	for end < len(s) {
		r, size := utf8.DecodeRuneInString(s[end:])
		w := m.rune(r, size)
		if used+w > room {
			break
		}
		used += w
		end += size
	}
	return s[:end] + ellipsis
}
