package redact

import (
	"strings"
	"unicode/utf8"
)

// A scanner walks one text from left to right and decides, position by
// position, whether a secret starts there. Every decision it makes is final:
// a detector that would need text beyond what has arrived answers "hold"
// (partial) instead of guessing, so the decision for a position is the same
// whether the text arrived whole or one byte at a time. That is the whole
// reason Stream output equals String output; String is a scanner fed the
// whole text at once with final set.
//
// The scanner looks at most maxHold bytes past a position: a detector still
// undecided at that distance decides as if the text ended there (capped), in
// both modes, so the cap does not break the equality either.
type scanner struct {
	r        *Redactor
	mode     mode
	trk      tracker
	last     byte   // the last byte consumed; '\n' at the start of a text
	lastRune string // the last rune consumed, context for user patterns
	abs      int    // bytes consumed so far
	ext      []extCache
}

func newScanner(r *Redactor) *scanner {
	return &scanner{
		r:    r,
		last: '\n',
		trk:  tracker{space: true},
		ext:  make([]extCache, r.externals()),
	}
}

// status is a detector's answer for one position.
type status uint8

const (
	none    status = iota // no secret starts here, whatever follows
	partial               // cannot tell yet: hold the text from here
	found                 // a secret starts here; cand says where it ends
)

// cand is a detector's answer: for found, the input up to end is replaced
// by out (which keeps whatever is not secret, such as a key name), and the
// scanner then continues in mode enter (with indent or esc for it). It is
// kept small: it is returned for every word of a text.
type cand struct {
	st     status
	esc    bool
	enter  modeKind
	indent int32
	end    int
	out    string
}

var hold = cand{st: partial}

// run consumes as much of buf as can be decided and writes the redacted
// output to out; it returns the rest, held back. With final, buf is the end
// of the text and everything is decided.
func (sc *scanner) run(buf string, final bool, out *strings.Builder) string {
	input, off := buf, 0
	for off < len(input) {
		view := input[off:]
		if !final {
			view = completeRunes(view)
			if view == "" {
				break
			}
		}
		before := sc.mode.kind
		n, ok := sc.step(input, off, view, final, out)
		if !ok || (n == 0 && sc.mode.kind == before) {
			break // nothing decided (a step makes progress or changes mode)
		}
		sc.consume(view[:n])
		off += n
	}
	return input[off:]
}

// completeRunes drops an incomplete UTF-8 sequence at the end of s, so
// that a fragment boundary inside a rune never reaches a detector.
func completeRunes(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			return s
		}
	}
	return s
}

func (sc *scanner) consume(s string) {
	if s == "" {
		return
	}
	sc.trk.feed(s)
	sc.last = s[len(s)-1]
	_, size := utf8.DecodeLastRuneInString(s)
	sc.lastRune = s[len(s)-size:]
	sc.abs += len(s)
}

// step decides a prefix of buf (= input[off:]): it writes its output and
// returns its length. ok is false when nothing can be decided yet; a step
// that only changes mode returns 0, true.
func (sc *scanner) step(input string, off int, buf string, final bool, out *strings.Builder) (n int, ok bool) {
	switch sc.mode.kind {
	case modePEM:
		return sc.stepPEM(buf)
	case modeYAML:
		return sc.stepYAML(buf, final, out)
	case modeJSON:
		return sc.stepJSON(buf, final, out)
	}
	// Stop at the next line start: the line-start detectors need the
	// tracker to have seen every line before theirs.
	limit := len(buf)
	if i := strings.IndexByte(buf, '\n'); i >= 0 {
		limit = i + 1
	}
	ext := sc.external(input, off, buf, final)
	for p := 0; p < limit; p++ {
		if p != ext.start && (p > 0 || sc.last != '\n') && !canStart(buf, p, sc.last) {
			continue
		}
		c := sc.at(buf, p, final, ext)
		switch {
		case c.st == found:
			out.WriteString(buf[:p])
			out.WriteString(c.out)
			sc.mode = mode{kind: c.enter, indent: int(c.indent), lex: jsonLex{esc: c.esc}}
			return c.end, true
		case c.st == partial && !final:
			if p == 0 {
				return 0, false
			}
			out.WriteString(buf[:p])
			return p, true
		}
	}
	out.WriteString(buf[:limit])
	return limit, true
}

// at asks the detectors, in priority order, whether a secret starts at p.
func (sc *scanner) at(buf string, p int, final bool, ext extCand) cand {
	w, capped := buf, false
	if len(buf)-p >= maxHold {
		w, capped = buf[:p+maxHold], true
	}
	fin := final || capped
	if p == 0 && sc.last == '\n' {
		if c := sc.yamlData(w, fin, capped); c.st != none {
			return c
		}
	}
	switch w[p] {
	case '-':
		if c := pemAt(w, p, fin); c.st != none {
			return c
		}
	case '"', '\\':
		if c := sc.jsonData(buf, w, p, fin, capped); c.st != none {
			return c
		}
	}
	if ext.st != none && ext.start == p {
		return ext.cand
	}
	prev := sc.last
	if p > 0 {
		prev = buf[p-1]
	}
	if !isAlnum[prev] {
		if c := tokenAt(w, p, fin); c.st != none {
			return c
		}
	}
	if isLetter(w[p]) && !isSchemeChar[prev] {
		if c := urlAt(w, p, fin); c.st != none {
			return c
		}
	}
	if isKeyChar[w[p]] && !isKeyChar[prev] {
		if c := sc.assignAt(buf, w, p, fin, prev); c.st != none {
			return c
		}
	}
	return cand{}
}

// canStart is a quick test that rules out most positions: the detectors
// that ask at each position start at a key character or a quote, and
// (except a private key's dashes and a JSON key) only at the start of a
// word.
func canStart(buf string, p int, last byte) bool {
	c := buf[p]
	if !isKeyChar[c] && c != '"' && c != '\\' {
		return false
	}
	prev := last
	if p > 0 {
		prev = buf[p-1]
	}
	return !isAlnum[prev] || c == '-' || c == '"' || c == '\\'
}

// lineCol reports the column of buf[p] and whether only spaces precede it
// on its line.
func (sc *scanner) lineCol(buf string, p int) (col int, first bool) {
	if i := strings.LastIndexByte(buf[:p], '\n'); i >= 0 {
		return p - i - 1, allSpaces(buf[i+1 : p])
	}
	return sc.trk.col + p, sc.trk.space && allSpaces(buf[:p])
}

// lit matches the literal s at w[i:]: found with the index after it, partial
// when w ends inside it and more may come, none otherwise.
func lit(w string, i int, s string, fin bool) (int, status) {
	rest := w[i:]
	if strings.HasPrefix(rest, s) {
		return i + len(s), found
	}
	if !fin && len(rest) < len(s) && strings.HasPrefix(s, rest) {
		return i, partial
	}
	return i, none
}

// ended is the status for a detector that ran into the end of its view.
func ended(fin bool) status {
	if fin {
		return none
	}
	return partial
}

func allSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			return false
		}
	}
	return true
}

type byteSet [256]bool

func setOf(ranges ...string) *byteSet {
	var s byteSet
	for _, r := range ranges {
		if len(r) == 3 && r[1] == '-' {
			for c := int(r[0]); c <= int(r[2]); c++ {
				s[c] = true
			}
			continue
		}
		for i := 0; i < len(r); i++ {
			s[r[i]] = true
		}
	}
	return &s
}

var (
	isAlnum      = setOf("a-z", "A-Z", "0-9")
	isSchemeChar = setOf("a-z", "A-Z", "0-9", "+.-")
	isKeyChar    = setOf("a-z", "A-Z", "0-9", "_.-")
)

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// span returns the end of the run of bytes in set starting at i.
func span(w string, i int, set *byteSet) int {
	for i < len(w) && set[w[i]] {
		i++
	}
	return i
}
