package redact

import "strings"

// The "data": {…} object of a Kubernetes Secret in JSON (kubectl get secret
// -o json, also compact, and escaped inside the last-applied-configuration
// annotation). As with YAML, kind comes after data in kubectl's output, so
// the object is held until the sibling "kind" decides; pretty-printed JSON
// whose kind came first is decided at once through the tracker. Once
// decided, the object is redacted as it streams in modeJSON: keys stay,
// string values become "[REDACTED:k8s_secret_data]".

var jsonDataKeys = [...]string{`"data"`, `"stringData"`, `\"data\"`, `\"stringData\"`}

// jsonData matches "data": { at w[p].
func (sc *scanner) jsonData(buf, w string, p int, fin, capped bool) cand {
	esc := w[p] == '\\'
	keys := jsonDataKeys[:2]
	if esc {
		keys = jsonDataKeys[2:]
	}
	k, st := 0, none
	for _, key := range keys {
		e, s := lit(w, p, key, fin)
		if s == found {
			k, st = e, found
			break
		}
		st = max(st, s)
	}
	if st != found {
		return cand{st: st}
	}
	for _, want := range []byte{':', '{'} {
		if k, st = jsonWS(w, k, esc); st == partial {
			return cand{st: ended(fin)}
		}
		if w[k] != want {
			return cand{}
		}
		k++
	}
	known := ""
	if col, first := sc.lineCol(buf, p); first && !esc {
		known = sc.trk.kindAt(col)
	}
	secret := cand{st: found, end: k, out: w[p:k], enter: modeJSON, esc: esc}
	return ifSecret(secret, known, func() status { return jsonKindAfter(w, k, esc, fin, capped) })
}

// jsonKindAfter skips the data object that starts at w[k] and looks at its
// siblings for "kind". found means "kind": "Secret".
func jsonKindAfter(w string, k int, esc, fin, capped bool) status {
	l := jsonLex{esc: esc, depth: 1}
	j := k
	for ; j < len(w) && l.depth > 0; j++ {
		l.feed(w[j])
	}
	if l.depth > 0 {
		return undecided(fin, capped)
	}
	for {
		var st status
		if j, st = jsonWS(w, j, esc); st == partial {
			return undecided(fin, capped)
		}
		switch w[j] {
		case ',':
			j++
			continue
		case '}':
			return none
		}
		key, e, st := jsonString(w, j, esc)
		if st != found {
			return orUndecided(st, fin, capped)
		}
		if j, st = jsonWS(w, e, esc); st == partial {
			return undecided(fin, capped)
		}
		if w[j] != ':' {
			return none
		}
		if j, st = jsonWS(w, j+1, esc); st == partial {
			return undecided(fin, capped)
		}
		if key == "kind" {
			val, _, st := jsonString(w, j, esc)
			if st != found {
				return orUndecided(st, fin, capped)
			}
			if val == "Secret" {
				return found
			}
			return none
		}
		if j, st = jsonSkipValue(w, j, esc); st != found {
			return orUndecided(st, fin, capped)
		}
	}
}

func orUndecided(st status, fin, capped bool) status {
	if st == partial {
		return undecided(fin, capped)
	}
	return st
}

// jsonWant is what may come next inside a Secret's data object.
type jsonWant uint8

const (
	wantKey jsonWant = iota
	wantColon
	wantValue
	wantScalar // inside a number or literal, or after it
	wantComma
)

// stepJSON redacts a Secret's data object as it arrives, up to its closing
// brace. A byte that cannot continue a flat object of strings (output cut
// off, or not JSON after all) leaves the mode, so the detectors see the
// rest again.
func (sc *scanner) stepJSON(buf string, final bool, out *strings.Builder) (int, bool) {
	m := &sc.mode
	lim := len(buf)
	if !final { // a trailing backslash may start a \" that decides a string
		for lim > 0 && buf[lim-1] == '\\' && len(buf)-lim < maxHold {
			lim--
		}
		if lim == 0 {
			return 0, false
		}
	}
	// A bare value is held until the byte after it: a word that turns out
	// not to be JSON ("Authorization: …" on a line of its own) is handed
	// back whole, so the detectors see it from its start (written as it
	// came, its key would be lost to them). One that ends as a value is a
	// value of the Secret's data, redacted like a string.
	scalar := -1
	flush := func() {
		if scalar >= 0 {
			out.WriteString(secretDataMarker)
			scalar = -1
		}
	}
	for i := 0; i < lim; i++ {
		c := buf[i]
		if m.lex.inStr {
			if c == '\n' { // a JSON string holds no newline: it was cut off
				sc.mode = mode{}
				return i, true
			}
			ev := m.lex.feed(c)
			switch {
			case m.key:
				out.WriteByte(c)
			case ev == evStrEnd:
				out.WriteString(m.lex.quote())
			}
			if ev == evStrEnd {
				m.want = wantComma
				if m.key {
					m.want = wantColon
				}
			}
			continue
		}
		if c == '\\' {
			m.lex.feed(c)
			continue
		}
		if c == '-' && scalar < 0 && m.lex.bs == 0 && m.want == wantValue {
			// A private key block where a bare value was expected is the
			// PEM detector's: taken as a value, it would end at the space
			// in its BEGIN line and leave the key's body in the clear.
			w, fin := buf, final
			if len(buf)-i >= maxHold {
				w, fin = buf[:i+maxHold], true
			}
			switch pemAt(w, i, fin).st {
			case found:
				sc.mode = mode{}
				return i, true
			case partial:
				return i, i > 0 // held until the BEGIN line is whole
			}
		}
		bs := m.lex.bs
		ev := m.lex.feed(c)
		if !m.accept(c, bs, ev) {
			sc.mode = mode{}
			if scalar >= 0 {
				return scalar, true
			}
			return i - bs, true
		}
		if bs == 0 && m.want == wantScalar && isScalarByte(c) {
			if scalar < 0 {
				scalar = i
			}
			continue
		}
		flush()
		out.WriteString(strings.Repeat(`\`, bs))
		out.WriteByte(c)
		switch {
		case ev == evStrStart && !m.key:
			out.WriteString(secretDataMarker)
		case ev == evClose:
			sc.mode = mode{}
			return i + 1, true
		}
	}
	if scalar >= 0 && !final && lim-scalar < maxHold {
		return scalar, true // decided by the byte after it
	}
	flush()
	if final && !m.lex.inStr {
		out.WriteString(strings.Repeat(`\`, m.lex.bs))
	}
	return lim, true
}

// isScalarByte reports whether c may be part of a bare JSON value.
func isScalarByte(c byte) bool { return isAlnum[c] || c == '.' || c == '+' || c == '-' }

// accept moves m.want past byte c (after bs backslashes; ev is what the
// lexer made of it), or reports that c cannot come here.
func (m *mode) accept(c byte, bs int, ev lexEvent) bool {
	escWS := m.lex.esc && bs == 1 && (c == 'n' || c == 't' || c == 'r')
	switch {
	case bs > 0 && !m.lex.esc:
		return false
	case ev == evStrStart:
		switch m.want {
		case wantKey:
			m.key = true
		case wantValue:
			m.key = false
		default:
			return false
		}
		return true
	case ev == evClose:
		return c == '}' && (m.want == wantKey || m.want == wantComma || m.want == wantScalar)
	case ev == evColon:
		if m.want != wantColon {
			return false
		}
		m.want = wantValue
		return true
	case ev == evComma:
		if m.want != wantComma && m.want != wantScalar {
			return false
		}
		m.want = wantKey
		return true
	case escWS || (bs == 0 && (c == ' ' || c == '\t' || c == '\r' || c == '\n')):
		if m.want == wantScalar {
			m.want = wantComma
		}
		return true
	case bs == 0 && (isAlnum[c] || c == '.' || c == '+' || c == '-'):
		if m.want == wantValue || m.want == wantScalar {
			m.want = wantScalar
			return true
		}
	}
	return false
}
