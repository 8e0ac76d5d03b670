package redact

import "strings"

// The data: (and stringData:) map of a Kubernetes Secret in YAML:
//
//	apiVersion: v1
//	data:
//	  password: cGFzc3dvcmQ=      <- redacted
//	kind: Secret
//
// kubectl prints kind after data, so whether a data: map is a Secret's (to
// redact) or a ConfigMap's (to keep) is only known after the map: it is
// held until a sibling kind: line decides, the object ends (not a Secret),
// or maxHold is reached (treated as a Secret). Once decided, the map is
// redacted line by line in modeYAML.

var (
	secretDataMarker = marker(kindSecretData)
	spaceSet         = setOf(" ")
)

// yamlData matches a data: or stringData: line at w[0], a line start.
func (sc *scanner) yamlData(w string, fin, capped bool) cand {
	i := span(w, 0, spaceSet)
	for i+1 < len(w) && w[i] == '-' && w[i+1] == ' ' {
		i = span(w, i+2, spaceSet)
	}
	if i == len(w) || (w[i] == '-' && i+1 == len(w)) {
		return cand{st: ended(fin)}
	}
	d := i // the key's column
	k, st := lit(w, i, "data:", fin)
	if st != found {
		var st2 status
		if k, st2 = lit(w, i, "stringData:", fin); st2 != found {
			return cand{st: max(st, st2)}
		}
	}
	e := span(w, k, blank)
	if e < len(w) && w[e] == '#' {
		if c := strings.IndexByte(w[e:], '\n'); c >= 0 {
			e += c
		} else {
			e = len(w)
		}
	}
	if e < len(w) && w[e] == '\r' {
		e++
	}
	end := len(w)
	switch {
	case e == len(w):
		if !fin {
			return hold
		}
	case w[e] == '\n':
		end = e + 1
	default:
		return cand{} // data: {...} inline, or a scalar
	}
	secret := cand{st: found, end: end, out: w[:end], enter: modeYAML, indent: int32(d)}
	return ifSecret(secret, sc.trk.kindAt(d), func() status { return yamlKindAfter(w, end, d, fin, capped) })
}

// ifSecret returns secret if the data map is a Secret's: by the kind
// remembered for its object (known, "" if none), else by what kindAfter
// finds after the map.
func ifSecret(secret cand, known string, kindAfter func() status) cand {
	switch known {
	case "Secret":
		return secret
	case "":
	default:
		return cand{}
	}
	switch kindAfter() {
	case found:
		return secret
	case partial:
		return hold
	}
	return cand{}
}

// yamlKindAfter looks past the map of a data: key at column d for a sibling
// kind: line. found means kind: Secret.
func yamlKindAfter(w string, pos, d int, fin, capped bool) status {
	inMap := true
	for {
		if pos == len(w) {
			return undecided(fin, capped)
		}
		line, next := w[pos:], len(w)
		if le := strings.IndexByte(line, '\n'); le >= 0 {
			line, next = line[:le], pos+le+1
		} else if capped {
			return found
		} else if !fin {
			return partial
		}
		pos = next
		n := span(line, 0, spaceSet)
		rest := strings.TrimRight(line[n:], " \r")
		if rest == "" || rest[0] == '#' {
			continue
		}
		if inMap {
			if n > d {
				continue
			}
			inMap = false
		}
		if n < d || (d == 0 && (strings.HasPrefix(rest, "---") || strings.HasPrefix(rest, "..."))) {
			return none // the object ended without a kind
		}
		if n > d || rest == "-" || strings.HasPrefix(rest, "- ") {
			continue
		}
		key, val := keyValue([]byte(rest))
		switch string(key) {
		case "":
			return none // not YAML any more: the object ended
		case "kind":
			if string(val) == "Secret" {
				return found
			}
			return none
		case "apiVersion":
			return none // the next object
		}
	}
}

// undecided is the answer of a look-ahead that ran out of text: hold, or at
// the hold limit assume a secret, or at the end of the text assume none.
func undecided(fin, capped bool) status {
	switch {
	case capped:
		return found
	case fin:
		return none
	}
	return partial
}

// stepYAML redacts one line of a Secret's data map, or leaves modeYAML at
// the first line that is not part of the map.
func (sc *scanner) stepYAML(buf string, final bool, out *strings.Builder) (int, bool) {
	if sc.last != '\n' { // the rest of a line cut at maxHold
		i := strings.IndexByte(buf, '\n')
		if i < 0 {
			return len(buf), true
		}
		out.WriteByte('\n')
		return i + 1, true
	}
	w, capped := buf, false
	if len(buf) >= maxHold {
		w, capped = buf[:maxHold], true
	}
	fin := final || capped
	i := span(w, 0, spaceSet)
	if i == len(w) {
		if !fin {
			return 0, false
		}
		out.WriteString(w)
		return len(w), true
	}
	c := w[i]
	blankLine := c == '\n' || c == '\r'
	if !blankLine && c != '#' && i <= sc.mode.indent {
		sc.mode = mode{}
		return 0, true
	}
	end := len(w)
	if le := strings.IndexByte(w, '\n'); le >= 0 {
		end = le + 1
	} else if !fin {
		return 0, false
	}
	if blankLine {
		out.WriteString(w[:end])
	} else {
		out.WriteString(redactMapLine(w[:end], i))
	}
	return end, true
}

// redactMapLine keeps the indentation and key of `  key: value` and
// redacts the value; a line of another shape (a block scalar's content, a
// comment) is redacted whole.
func redactMapLine(line string, indent int) string {
	body, eol := line[indent:], ""
	if strings.HasSuffix(body, "\n") {
		body, eol = body[:len(body)-1], "\n"
	}
	if strings.HasSuffix(body, "\r") {
		body, eol = body[:len(body)-1], "\r"+eol
	}
	k := span(body, 0, isKeyChar)
	if k > 0 && k < len(body) && body[k] == ':' && (k+1 == len(body) || body[k+1] == ' ') {
		if strings.TrimSpace(body[k+1:]) == "" {
			return line // key: with its value on the lines below
		}
		return line[:indent] + body[:k+1] + " " + secretDataMarker + eol
	}
	return line[:indent] + secretDataMarker + eol
}
