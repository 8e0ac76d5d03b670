package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NodeKind is the kind of a Markdown node.
type NodeKind int

// Node kinds: the subset of Markdown language models use in chat.
const (
	NodeText   NodeKind = iota // Text
	NodeBold                   // **x**, __x__, and headings
	NodeItalic                 // *x*, _x_
	NodeStrike                 // ~~x~~
	NodeCode                   // `x`: Text
	NodePre                    // a fenced code block: Text, Lang
	NodeLink                   // [x](url): URL, Children
)

// Node is a parsed piece of Markdown. Platforms walk the tree to emit their
// own format; because the tree is always well nested, so is their output,
// whatever the model wrote.
type Node struct {
	Kind     NodeKind
	Text     string
	Lang     string
	URL      string
	Children []Node
}

// ParseMarkdown parses the Markdown of a chat message. It never fails:
// anything that is not well-formed markup (an unclosed "**", a lone "`",
// a link to an unsafe scheme) stays literal text. Emphasis does not span
// lines. Headings become bold lines and list bullets become "•".
func ParseMarkdown(md string) []Node {
	var out []Node
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if i > 0 {
			out = appendText(out, "\n")
		}
		line := lines[i]
		if marker, info, ok := fenceOpen(line); ok {
			var body []string
			j := i + 1
			for ; j < len(lines) && !fenceClose(lines[j], marker); j++ {
				body = append(body, lines[j])
			}
			lang, _, _ := strings.Cut(info, " ")
			out = append(out, Node{Kind: NodePre, Text: strings.Join(body, "\n"), Lang: lang})
			i = j // the closing line (or past the end)
			continue
		}
		out = append(out, parseLine(line)...)
	}
	return mergeText(out)
}

func parseLine(line string) []Node {
	trimmed := strings.TrimLeft(line, " ")
	indent := line[:len(line)-len(trimmed)]
	if h := strings.TrimLeft(trimmed, "#"); len(trimmed)-len(h) >= 1 && len(trimmed)-len(h) <= 6 && strings.HasPrefix(h, " ") {
		return []Node{{Kind: NodeBold, Children: parseInline(strings.TrimSpace(h))}}
	}
	if len(trimmed) >= 2 && strings.ContainsRune("-*+", rune(trimmed[0])) && trimmed[1] == ' ' {
		return append([]Node{{Kind: NodeText, Text: indent + "• "}}, parseInline(trimmed[2:])...)
	}
	return parseInline(line)
}

func parseInline(s string) []Node {
	var out []Node
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, Node{Kind: NodeText, Text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) && strings.IndexByte("\\`*_~[]()#+-.!|>", s[i+1]) >= 0 {
				text.WriteByte(s[i+1])
				i += 2
				continue
			}
		case '`':
			n := runLen(s, i, '`')
			if j := codeClose(s, i+n, n); j >= 0 {
				flush()
				out = append(out, Node{Kind: NodeCode, Text: trimCode(s[i+n : j])})
				i = j + n
				continue
			}
			text.WriteString(s[i : i+n])
			i += n
			continue
		case '*', '_', '~':
			if n, next, ok := parseEmphasis(s, i); ok {
				flush()
				out = append(out, n)
				i = next
				continue
			}
			n := runLen(s, i, c)
			text.WriteString(s[i : i+n])
			i += n
			continue
		case '[':
			if n, next, ok := parseLink(s, i); ok {
				flush()
				out = append(out, n)
				i = next
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		text.WriteString(s[i : i+size])
		i += size
	}
	flush()
	return out
}

func runLen(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// codeClose finds the backtick run of exactly n that closes a code span.
func codeClose(s string, from, n int) int {
	for j := from; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		m := runLen(s, j, '`')
		if m == n {
			return j
		}
		j += m
	}
	return -1
}

func trimCode(c string) string {
	if len(c) >= 2 && c[0] == ' ' && c[len(c)-1] == ' ' && strings.TrimSpace(c) != "" {
		return c[1 : len(c)-1]
	}
	return c
}

// parseEmphasis parses **x**, __x__, *x*, _x_ or ~~x~~ at s[i]. Like
// CommonMark, "_" inside a word (snake_case) is not emphasis, and a
// delimiter next to white space on its inner side does not count.
func parseEmphasis(s string, i int) (Node, int, bool) {
	c := s[i]
	n := runLen(s, i, c)
	var dl int
	var kind NodeKind
	switch {
	case c == '~' && n == 2:
		dl, kind = 2, NodeStrike
	case c != '~' && n == 2:
		dl, kind = 2, NodeBold
	case c != '~' && n == 1:
		dl, kind = 1, NodeItalic
	default:
		return Node{}, 0, false
	}
	if i+dl >= len(s) {
		return Node{}, 0, false
	}
	if r, _ := utf8.DecodeRuneInString(s[i+dl:]); unicode.IsSpace(r) {
		return Node{}, 0, false
	}
	if c == '_' && i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); isWord(r) {
			return Node{}, 0, false
		}
	}
	for j := i + dl; j < len(s); {
		switch s[j] {
		case '`':
			m := runLen(s, j, '`')
			if k := codeClose(s, j+m, m); k >= 0 {
				j = k + m
			} else {
				j += m
			}
			continue
		case c:
			m := runLen(s, j, c)
			if m == dl && j > i+dl && closes(s, j, dl, c) {
				return Node{Kind: kind, Children: parseInline(s[i+dl : j])}, j + dl, true
			}
			j += m
			continue
		}
		j++
	}
	return Node{}, 0, false
}

func closes(s string, j, dl int, c byte) bool {
	if r, _ := utf8.DecodeLastRuneInString(s[:j]); unicode.IsSpace(r) {
		return false
	}
	if c == '_' && j+dl < len(s) {
		if r, _ := utf8.DecodeRuneInString(s[j+dl:]); isWord(r) {
			return false
		}
	}
	return true
}

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// parseLink parses [text](url) for the schemes a chat may link to.
func parseLink(s string, i int) (Node, int, bool) {
	close := strings.IndexByte(s[i:], ']')
	if close <= 1 || i+close+1 >= len(s) || s[i+close+1] != '(' {
		return Node{}, 0, false
	}
	close += i
	end := strings.IndexByte(s[close+2:], ')')
	if end < 0 {
		return Node{}, 0, false
	}
	end += close + 2
	url := s[close+2 : end]
	if !SafeURL(url) {
		return Node{}, 0, false
	}
	return Node{Kind: NodeLink, URL: url, Children: parseInline(s[i+1 : close])}, end + 1, true
}

// SafeURL reports whether url may become a link: http, https, mailto or tg,
// with no white space or quotes.
func SafeURL(url string) bool {
	if url == "" || strings.ContainsAny(url, " \t\n\"'<>") {
		return false
	}
	l := strings.ToLower(url)
	for _, p := range []string{"https://", "http://", "mailto:", "tg://"} {
		if strings.HasPrefix(l, p) && len(l) > len(p) {
			return true
		}
	}
	return false
}

func appendText(ns []Node, t string) []Node {
	return append(ns, Node{Kind: NodeText, Text: t})
}

func mergeText(ns []Node) []Node {
	out := ns[:0]
	for _, n := range ns {
		if n.Kind == NodeText && len(out) > 0 && out[len(out)-1].Kind == NodeText {
			out[len(out)-1].Text += n.Text
			continue
		}
		out = append(out, n)
	}
	return out
}

// PlainText returns what a reader sees of md once it is formatted: the
// text without markup. Fakes of platforms that render Markdown natively use
// it to compare what a user would read.
func PlainText(md string) string {
	var b strings.Builder
	writePlain(&b, ParseMarkdown(md))
	return b.String()
}

func writePlain(b *strings.Builder, ns []Node) {
	for _, n := range ns {
		switch n.Kind {
		case NodeText, NodeCode, NodePre:
			b.WriteString(n.Text)
		default:
			writePlain(b, n.Children)
		}
	}
}
