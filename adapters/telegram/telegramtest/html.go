package telegramtest

import (
	"fmt"
	"strconv"
	"strings"
)

// allowedTags are the tags of Telegram's HTML parse mode.
var allowedTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "a": true, "code": true, "pre": true,
	"tg-spoiler": true, "span": true, "blockquote": true, "tg-emoji": true,
}

// ParseHTML parses text the way Telegram's HTML parse mode does and returns
// what the reader sees. It fails, like Telegram, on unknown tags, unclosed
// or crossed tags, and on "<", ">" or "&" that are not part of a tag or an
// entity (Telegram tolerates some of those; the fake is stricter so that
// escaping bugs cannot hide).
func ParseHTML(text string) (string, error) {
	var out strings.Builder
	var stack []string
	for i := 0; i < len(text); {
		switch c := text[i]; c {
		case '<':
			end := strings.IndexByte(text[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("can't parse entities: unclosed start tag at byte offset %d", i)
			}
			tag := text[i+1 : i+end]
			if strings.HasPrefix(tag, "/") {
				name := strings.TrimSpace(tag[1:])
				if len(stack) == 0 || stack[len(stack)-1] != name {
					return "", fmt.Errorf("can't parse entities: can't find end tag corresponding to start tag %q at byte offset %d", name, i)
				}
				stack = stack[:len(stack)-1]
			} else {
				name, attrs, _ := strings.Cut(tag, " ")
				if !allowedTags[name] {
					return "", fmt.Errorf("can't parse entities: unsupported start tag %q at byte offset %d", name, i)
				}
				if name == "a" && !strings.HasPrefix(strings.TrimSpace(attrs), `href="`) {
					return "", fmt.Errorf("can't parse entities: a tag without href at byte offset %d", i)
				}
				if strings.ContainsAny(attrs, "<") {
					return "", fmt.Errorf("can't parse entities: bad attribute at byte offset %d", i)
				}
				stack = append(stack, name)
			}
			i += end + 1
		case '>':
			return "", fmt.Errorf("can't parse entities: unexpected \">\" at byte offset %d", i)
		case '&':
			end := strings.IndexByte(text[i:], ';')
			if end < 0 || end > 10 {
				return "", fmt.Errorf("can't parse entities: unsupported HTML entity at byte offset %d", i)
			}
			r, ok := entity(text[i+1 : i+end])
			if !ok {
				return "", fmt.Errorf("can't parse entities: unsupported HTML entity %q at byte offset %d", text[i:i+end+1], i)
			}
			out.WriteString(r)
			i += end + 1
		default:
			out.WriteByte(c)
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("can't parse entities: can't find end tag corresponding to start tag %q", stack[len(stack)-1])
	}
	return out.String(), nil
}

func entity(name string) (string, bool) {
	switch name {
	case "lt":
		return "<", true
	case "gt":
		return ">", true
	case "amp":
		return "&", true
	case "quot":
		return `"`, true
	}
	if strings.HasPrefix(name, "#x") {
		n, err := strconv.ParseInt(name[2:], 16, 32)
		return string(rune(n)), err == nil
	}
	if strings.HasPrefix(name, "#") {
		n, err := strconv.Atoi(name[1:])
		return string(rune(n)), err == nil
	}
	return "", false
}
