package redact

import (
	"bytes"
	"strings"
)

var privateKeyMarker = marker(kindPrivateKey)

// pemAt matches the BEGIN line of a private key block (RSA, EC, OPENSSH,
// ENCRYPTED, PGP, ...). The whole block becomes one [REDACTED:private_key]:
// the scanner then drops the body in modePEM.
func pemAt(w string, p int, fin bool) cand {
	const begin = "-----BEGIN "
	i, st := lit(w, p, begin, fin)
	if st != found {
		return cand{st: st}
	}
	j := span(w, i, pemLabel)
	if j == len(w) {
		return cand{st: ended(fin)}
	}
	e, st := lit(w, j, "-----", fin)
	if st != found {
		return cand{st: st}
	}
	if !strings.Contains(w[i:j], "PRIVATE KEY") {
		return cand{} // a certificate or public key is not secret
	}
	return cand{st: found, end: e, out: privateKeyMarker, enter: modePEM}
}

var (
	pemLabel = setOf("A-Z", "0-9", " ")
	// pemBody is what a key block holds up to its END line: base64, the
	// headers of an encrypted key (Proc-Type: 4,ENCRYPTED), line breaks,
	// the \n escapes of a key inside a JSON string and the quotes of a key
	// written as a concatenation of string literals. Any other byte ends a
	// block whose END line never came (truncated output).
	pemBody = setOf("A-Z", "a-z", "0-9", "+/=-:,\\\"'", " \t\r\n")
)

// stepPEM drops the body of a private key up to and including its END line,
// or, when its END line never came, up to the first byte a key cannot hold
// (to the end of that line, when that byte is in the middle of one). It
// never holds anything back: each byte is decided alone.
func (sc *scanner) stepPEM(buf string) (int, bool) {
	m := &sc.mode
	for i := 0; i < len(buf); i++ {
		c := buf[i]
		if m.drain {
			if c == '\n' {
				sc.mode = mode{}
				return i, true
			}
			continue
		}
		if !pemBody[c] {
			if n := len(m.tail); n > 0 && m.tail[n-1] != '\n' {
				// Mid-line: the line's start went with the key, so the
				// rest (a key name lost, its value left) goes too.
				m.drain = true
				continue
			}
			sc.mode = mode{}
			return i, true
		}
		if len(m.tail) >= 192 {
			m.tail = m.tail[:copy(m.tail, m.tail[len(m.tail)-96:])]
		}
		m.tail = append(m.tail, c)
		if c == '-' && pemEnded(m.tail) {
			sc.mode = mode{}
			return i + 1, true
		}
	}
	return len(buf), true
}

// pemEnded reports whether tail ends with an END line of a private key.
func pemEnded(tail []byte) bool {
	if !bytes.HasSuffix(tail, []byte("-----")) {
		return false
	}
	i := bytes.LastIndex(tail, []byte("-----END "))
	if i < 0 {
		return false
	}
	label := tail[i+len("-----END ") : len(tail)-len("-----")]
	for _, c := range label {
		if !pemLabel[c] {
			return false
		}
	}
	return bytes.Contains(label, []byte("PRIVATE KEY"))
}
