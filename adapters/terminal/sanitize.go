package terminal

import (
	"strings"
	"unicode/utf8"
)

// Sanitize makes untrusted text (the model's, a tool's, a user's) safe to
// print on a terminal: a terminal obeys escape sequences wherever they come
// from, so a model or tool output could otherwise retitle the window, clear
// the screen, or move the cursor to overwrite an approval prompt; and bidi
// overrides could show a command other than the one that will run.
//
// It keeps printable text, '\n' and '\t', and drops: ESC sequences (CSI
// "ESC [ … final", OSC "ESC ] … BEL or ESC \", DCS/SOS/PM/APC strings,
// two- and three-byte escapes), their 8-bit forms U+009B and U+009D…, all
// other C0 and C1 controls and DEL, and the bidi embeddings, overrides and
// isolates U+202A–U+202E and U+2066–U+2069. Invalid UTF-8 becomes U+FFFD
// (a raw byte 0x9B is CSI to a terminal that is not in UTF-8 mode).
//
// A string sequence cut off at the end of s is dropped to the end: text
// streams in pieces, and each piece is cleaned on its own, so the rest of
// such a sequence shows up as plain text in the next piece at worst.
func Sanitize(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
			i++
		case r == 0x1b:
			i = skipEscape(s, i+1)
		case r == 0x9b: // CSI
			i = skipCSI(s, i+size)
		case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f: // DCS, SOS, OSC, PM, APC
			i = skipString(s, i+size)
		case dropped(r):
			i += size
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
	}
	return b.String()
}

// clean reports whether s needs no change, the common case, without
// allocating.
func clean(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r == 0x1b || dropped(r) {
			return false // RuneError: invalid UTF-8, or a literal U+FFFD, which costs a copy only
		}
	}
	return true
}

// dropped reports whether r is a control or bidi character to drop.
func dropped(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || 0x80 <= r && r <= 0x9f:
		return true
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069:
		return true
	}
	return false
}

// skipEscape skips what follows an ESC at s[i:] and returns the index after it.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch c := s[i]; {
	case c == '[':
		return skipCSI(s, i+1)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		return skipString(s, i+1)
	case 0x20 <= c && c <= 0x2f: // intermediates, then one final byte
		for i < len(s) && 0x20 <= s[i] && s[i] <= 0x2f {
			i++
		}
		if i < len(s) && 0x30 <= s[i] && s[i] <= 0x7e {
			i++
		}
		return i
	case 0x30 <= c && c <= 0x7e: // a two-byte escape, like ESC c (reset)
		return i + 1
	}
	return i // ESC before anything else: drop the ESC alone
}

// skipCSI skips the parameters, intermediates and final byte of a control
// sequence starting at s[i:].
func skipCSI(s string, i int) int {
	for i < len(s) && 0x20 <= s[i] && s[i] <= 0x3f {
		i++
	}
	if i < len(s) && 0x40 <= s[i] && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString skips a control string starting at s[i:] up to and including
// its terminator: BEL, ESC \ or ST (U+009C); without one, to the end.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + len("\u009c")
		}
		i++
	}
	return i
}
