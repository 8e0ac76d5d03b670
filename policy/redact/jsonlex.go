package redact

// jsonLex follows JSON one byte at a time: depth, and whether it is inside
// a string. esc is for JSON inside a JSON string (kubectl's
// last-applied-configuration annotation in -o json output), where strings
// are delimited by \" instead of ".
type jsonLex struct {
	esc   bool
	depth int
	inStr bool
	bs    int // backslashes just seen
}

type lexEvent uint8

const (
	evNone lexEvent = iota
	evStrStart
	evStrEnd
	evOpen
	evClose
	evColon
	evComma
)

func (l *jsonLex) feed(c byte) lexEvent {
	if c == '\\' {
		l.bs++
		return evNone
	}
	bs := l.bs
	l.bs = 0
	if l.inStr {
		// A string ends at " after an even run of backslashes; escaped, at
		// \" (a run of 4k+1), while \\\" is an escaped quote inside it and
		// a bare " ends the outer string, so ours too.
		if c == '"' && (bs%2 == 0 || (l.esc && bs%4 == 1)) {
			l.inStr = false
			return evStrEnd
		}
		return evNone
	}
	switch c {
	case '"':
		if l.esc && bs%2 == 0 {
			return evNone
		}
		l.inStr = true
		return evStrStart
	case '{', '[':
		l.depth++
		return evOpen
	case '}', ']':
		l.depth--
		return evClose
	case ':':
		return evColon
	case ',':
		return evComma
	}
	return evNone
}

func (l *jsonLex) quote() string {
	if l.esc {
		return `\"`
	}
	return `"`
}

// jsonWS returns the index after the white space at w[i] (in escaped JSON
// also \n, \t, \r written as escapes), and partial if w may continue it.
func jsonWS(w string, i int, esc bool) (int, status) {
	for i < len(w) {
		switch w[i] {
		case ' ', '\t', '\r', '\n':
			i++
			continue
		case '\\':
			if !esc {
				return i, found
			}
			if i+1 == len(w) {
				return i, partial
			}
			if c := w[i+1]; c == 'n' || c == 't' || c == 'r' {
				i += 2
				continue
			}
		}
		return i, found
	}
	return i, partial
}

// jsonString reads the string at w[i]; partial if w ends inside it.
func jsonString(w string, i int, esc bool) (content string, end int, st status) {
	l := jsonLex{esc: esc}
	q := l.quote()
	if _, st := lit(w, i, q, false); st != found {
		return "", i, st
	}
	s := i + len(q)
	l.inStr = true
	for j := s; j < len(w); j++ {
		if l.feed(w[j]) == evStrEnd {
			e := j
			if esc && e > s && w[e-1] == '\\' {
				e-- // the backslash of \"
			}
			return w[s:e], j + 1, found
		}
	}
	return "", i, partial
}

// jsonSkipValue returns the index after the value at w[i].
func jsonSkipValue(w string, i int, esc bool) (int, status) {
	if i == len(w) {
		return i, partial
	}
	switch w[i] {
	case '"', '\\':
		_, e, st := jsonString(w, i, esc)
		return e, st
	case '{', '[':
		l := jsonLex{esc: esc}
		for j := i; j < len(w); j++ {
			if l.feed(w[j]) == evClose && l.depth == 0 {
				return j + 1, found
			}
		}
		return i, partial
	}
	j := i
	for j < len(w) && !jsonScalarEnd[w[j]] {
		j++
	}
	if j == len(w) {
		return j, partial
	}
	if j == i {
		return i, none
	}
	return j, found
}

var jsonScalarEnd = setOf(",}] \t\r\n\\")
