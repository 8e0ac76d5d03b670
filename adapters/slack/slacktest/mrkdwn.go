package slacktest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Plain renders Slack mrkdwn the way a reader sees it, without the markup:
// code blocks and code spans keep their content, *bold*, _italic_ and
// ~strike~ lose their markers when Slack would format them (a marker opens
// after a space or punctuation and not before a space, and closes the
// other way round, on the same line), <url|label> shows the label,
// <@U123> shows @U123, and &amp; &lt; &gt; are decoded.
func Plain(m string) string {
	var b strings.Builder
	for m != "" {
		i := strings.Index(m, "```")
		if i < 0 {
			b.WriteString(inline(m))
			break
		}
		j := strings.Index(m[i+3:], "```")
		if j < 0 {
			b.WriteString(inline(m))
			break
		}
		b.WriteString(inline(m[:i]))
		code := m[i+3 : i+3+j]
		code = strings.TrimPrefix(code, "\n")
		code = strings.TrimSuffix(code, "\n")
		b.WriteString(unescape(code))
		m = m[i+3+j+3:]
	}
	return b.String()
}

func unescape(s string) string {
	s = strings.ReplaceAll(s, "&lt;", "<")
	s = strings.ReplaceAll(s, "&gt;", ">")
	return strings.ReplaceAll(s, "&amp;", "&")
}

func inline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '`':
			if j := strings.IndexAny(s[i+1:], "`\n"); j > 0 && s[i+1+j] == '`' {
				b.WriteString(unescape(s[i+1 : i+1+j]))
				i += j + 2
				continue
			}
		case '<':
			if j := strings.IndexByte(s[i:], '>'); j > 0 {
				b.WriteString(link(s[i+1 : i+j]))
				i += j + 1
				continue
			}
		case '*', '_', '~':
			if j, ok := emphasis(s, i); ok {
				b.WriteString(inline(s[i+1 : j]))
				i = j + 1
				continue
			}
		}
		if c == '&' {
			if end := strings.IndexByte(s[i:], ';'); end > 0 && end <= 4 {
				b.WriteString(unescape(s[i : i+end+1]))
				i += end + 1
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

func link(in string) string {
	target, label, hasLabel := strings.Cut(in, "|")
	switch {
	case strings.HasPrefix(target, "@"), strings.HasPrefix(target, "#"), strings.HasPrefix(target, "!"):
		if hasLabel {
			return unescape(label)
		}
		if strings.HasPrefix(target, "!") {
			return "@" + target[1:]
		}
		return target
	case hasLabel:
		return unescape(label)
	}
	return unescape(target)
}

// emphasis finds the closing marker of an emphasis opened at s[i].
func emphasis(s string, i int) (int, bool) {
	c := s[i]
	if i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); isWord(r) {
			return 0, false
		}
	}
	if i+1 >= len(s) {
		return 0, false
	}
	if r, _ := utf8.DecodeRuneInString(s[i+1:]); unicode.IsSpace(r) || rune(c) == r {
		return 0, false
	}
	for j := i + 2; j < len(s); j++ {
		if s[j] == '\n' {
			return 0, false
		}
		if s[j] != c {
			continue
		}
		if r, _ := utf8.DecodeLastRuneInString(s[:j]); unicode.IsSpace(r) {
			continue
		}
		if j+1 < len(s) {
			if r, _ := utf8.DecodeRuneInString(s[j+1:]); isWord(r) {
				continue
			}
		}
		return j, true
	}
	return 0, false
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
