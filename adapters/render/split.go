package render

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Len returns the length of s in UTF-16 code units, the unit Telegram
// counts in; it is never less than the number of characters, so a limit
// kept in these units holds on every platform.
func Len(s string) int {
	n := 0
	for _, r := range s {
		// An invalid byte ranges as U+FFFD, one unit, as prefixFor counts
		// it: Len and the cuts must agree, or a chunk outgrows its limit.
		n += max(utf16.RuneLen(r), 1)
	}
	return n
}

// prefixFor returns the longest prefix length (in bytes, on a rune
// boundary) of s that is at most units long.
func prefixFor(s string, units int) int {
	n := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if w < 0 {
			w = 1
		}
		if n+w > units {
			return i
		}
		n += w
	}
	return len(s)
}

// Split cuts Markdown into chunks of at most max UTF-16 code units. It
// prefers to cut between paragraphs, then between lines, then between
// words, and never inside a code fence: a fence that does not fit the rest
// of a message starts the next one. Only a fence longer than a whole
// message is cut, and then it is closed at the end of the chunk and
// reopened, with its language, at the start of the next, so that every
// chunk is valid Markdown on its own.
//
// Split is deterministic and greedy from the start, so text appended to the
// end of a long draft changes only the last chunks.
func Split(md string, max int) []string {
	if max < 32 {
		max = 32
	}
	s := strings.Trim(md, "\n")
	s = strings.TrimRight(s, " \t\n")
	var out []string
	reopen := ""
	for s != "" {
		t := reopen + s
		if Len(t) <= max {
			if strings.TrimSpace(t) != "" { // as for every other chunk
				out = append(out, t)
			}
			break
		}
		fences := scanFences(t)
		cut, f := chooseCut(t, max, len(reopen), fences)
		var chunk string
		if f != nil {
			chunk = strings.TrimRight(t[:cut], "\n") + "\n" + f.marker
			reopen = reopener(f, max) + "\n"
			s = t[cut:]
		} else {
			chunk = strings.TrimRight(t[:cut], " \t\n")
			reopen = ""
			s = strings.TrimLeft(t[cut:], "\n")
		}
		if strings.TrimSpace(chunk) != "" {
			out = append(out, chunk)
		}
		if strings.TrimSpace(s) == "" {
			break
		}
	}
	return out
}

// reopener is the line that reopens f in the next chunk: its opening
// line, shortened so that it, one character and the closing marker fit
// in max (a long info string on a small limit would not).
func reopener(f *fence, max int) string {
	room := max - len(f.marker) - 4 // the newlines and a two-unit character
	if room < len(f.marker) {
		room = len(f.marker)
	}
	return f.opener[:prefixFor(f.opener, room)]
}

// fence is a fenced code block in a text: start is the offset of its
// opening line, end the offset after its closing line (or the end of the
// text when it is not closed yet).
type fence struct {
	start, body, end int
	closed           bool
	marker           string // "```" or longer, or "~~~"
	opener           string // the opening line, trimmed, for reopening
}

// scanFences finds the fenced code blocks of t, as CommonMark does for
// fences that are not nested in lists or quotes.
func scanFences(t string) []fence {
	var fs []fence
	var cur *fence
	for off := 0; off < len(t); {
		end := strings.IndexByte(t[off:], '\n')
		next := len(t)
		if end >= 0 {
			next = off + end + 1
		}
		line := strings.TrimRight(t[off:next], "\n")
		if cur == nil {
			if marker, _, ok := fenceOpen(line); ok {
				opener := strings.TrimSpace(line)
				if len(opener) > len(marker)+32 {
					opener = opener[:len(marker)+32]
				}
				fs = append(fs, fence{start: off, body: next, end: len(t), marker: marker, opener: opener})
				cur = &fs[len(fs)-1]
			}
		} else if fenceClose(line, cur.marker) {
			cur.end = next
			cur.closed = true
			cur = nil
		}
		off = next
	}
	return fs
}

// fenceOpen reports whether line opens a code fence, and returns its marker
// (the run of ` or ~) and info string (the language).
func fenceOpen(line string) (marker, info string, ok bool) {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 || len(l) < 3 || (l[0] != '`' && l[0] != '~') {
		return "", "", false
	}
	n := 0
	for n < len(l) && l[n] == l[0] {
		n++
	}
	if n < 3 {
		return "", "", false
	}
	info = strings.TrimSpace(l[n:])
	if l[0] == '`' && strings.ContainsRune(info, '`') {
		return "", "", false
	}
	return l[:n], info, true
}

// fenceClose reports whether line closes a fence opened with marker.
func fenceClose(line, marker string) bool {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 {
		return false
	}
	l = strings.TrimRight(l, " \t")
	if len(l) < len(marker) {
		return false
	}
	for i := 0; i < len(l); i++ {
		if l[i] != marker[0] {
			return false
		}
	}
	return true
}

func fenceAt(fs []fence, p int) *fence {
	for i := range fs {
		if fs[i].start < p && p < fs[i].end {
			return &fs[i]
		}
	}
	return nil
}

// chooseCut picks where the next chunk of t ends. It returns the fence
// that the cut falls in, if the cut must fall inside one. Cuts are always
// after min, so every chunk makes progress past a reopened fence line.
func chooseCut(t string, max, min int, fs []fence) (int, *fence) {
	w := prefixFor(t, max)
	f := fenceAt(fs, w)
	if f == nil {
		return bestCut(t, min, w, fs), nil
	}
	if f.start > min {
		fits := Len(t[f.start:f.end]) <= max
		if fits || f.start >= w/2 {
			return f.start, nil
		}
		if c := bestCut(t, min, f.start, fs); c >= w/2 {
			return c, nil
		}
	}
	// The fence does not fit in a message of its own: cut it at a line,
	// leaving room for the closing marker.
	inner := prefixFor(t, max-len(f.marker)-1)
	lo := f.body
	if lo <= min {
		lo = min + 1
	}
	if i := strings.LastIndexByte(t[:inner], '\n'); i >= 0 && i+1 > lo {
		return i + 1, f
	}
	// Mid-line: not where the line's first part would close the fence
	// early ("```" of a line "```x" in the code).
	for p := inner; p > lo; {
		if l := t[strings.LastIndexByte(t[:p], '\n')+1 : p]; !fenceClose(l, f.marker) {
			inner = p
			break
		}
		_, size := utf8.DecodeLastRuneInString(t[:p])
		p -= size
	}
	if inner <= min {
		inner = min + prefixFor(t[min:], 1) // a pathological opener: take one rune
	}
	// A cut before the end of the opening line's marker would leave a line
	// that opens nothing and close a fence that never opened: the chunk
	// takes the marker whole (only a marker too long for the limit gets
	// here, and such a chunk may be over it).
	if inner < f.body {
		head := ""
		if inner > f.start {
			head = t[f.start:inner]
		}
		if _, _, ok := fenceOpen(strings.TrimRight(head, " \t")); !ok {
			inner = f.start + strings.Index(t[f.start:], f.marker) + len(f.marker)
		}
	}
	return inner, f
}

// bestCut returns the best place in t[min:hi] to end a chunk outside any
// fence: after a blank line, else after a line, else after a space, each
// preferred only when it keeps at least half of the window; failing that,
// the latest of them, and failing everything, hi itself.
func bestCut(t string, min, hi int, fs []fence) int {
	half := hi / 2
	best := -1
	for _, sep := range []string{"\n\n", "\n", " "} {
		for end := hi; end > min; {
			i := strings.LastIndex(t[min:end], sep)
			if i < 0 {
				break
			}
			p := min + i + len(sep)
			if p > min && fenceAt(fs, p) == nil && !insideFenceLine(fs, p) && !opensFence(t, p) {
				if p >= half {
					return p
				}
				if p > best {
					best = p
				}
				break
			}
			end = min + i
		}
	}
	if best > min {
		return best
	}
	// Mid-word: not where a part of the cut line would open a fence.
	for p := hi; p > min; {
		if !opensFence(t, p) {
			return p
		}
		_, size := utf8.DecodeLastRuneInString(t[:p])
		p -= size
	}
	return hi
}

// opensFence reports whether a cut at p would make a code fence of a line
// that is none: the part of the line before the cut ("```go`x`" cut after
// "```go"), or the part after it ("use ```yaml" cut before "```yaml").
func opensFence(t string, p int) bool {
	start := strings.LastIndexByte(t[:p], '\n') + 1
	end := strings.IndexByte(t[p:], '\n')
	if end < 0 {
		end = len(t) - p
	}
	if _, _, ok := fenceOpen(t[start : p+end]); ok {
		return false // the line is a fence already
	}
	_, _, head := fenceOpen(strings.TrimRight(t[start:p], " \t"))
	_, _, tail := fenceOpen(t[p : p+end])
	return head || tail
}

// insideFenceLine reports whether p is on a fence's opening line, where a
// cut would orphan the marker from its language.
func insideFenceLine(fs []fence, p int) bool {
	for _, f := range fs {
		if f.start < p && p < f.body {
			return true
		}
	}
	return false
}

// closeFences closes a code fence left open at the end of md (a draft cut
// mid-stream), so that what follows it is not swallowed into the code.
func closeFences(md string) string {
	fs := scanFences(md)
	if len(fs) == 0 || fs[len(fs)-1].closed {
		return md
	}
	return strings.TrimRight(md, "\n") + "\n" + fs[len(fs)-1].marker
}
