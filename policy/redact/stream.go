package redact

import "strings"

// Stream redacts a text that arrives in fragments, such as the tokens of a
// model reply. Write returns only text that can no longer turn into (part
// of) a secret, so no prefix of a secret is ever released, not even in an
// intermediate edit of a message; what it holds back is released by a later
// Write or by Flush. The released text, in total, equals Redactor.String of
// the whole text however it was split.
//
// Ordinary prose is released at the latest at the next space or newline. A
// candidate secret (a private key block that has begun, the data: map of
// what may be a Kubernetes Secret, a key whose value is still arriving) is
// held until it is decided, or until it reaches 64 KiB, when it is redacted
// conservatively.
//
// A Stream is not safe for concurrent use.
type Stream struct {
	r        *Redactor
	sc       *scanner
	pending  string
	released strings.Builder
}

// Write adds fragment to the text and returns the text that became safe to
// show, which follows what earlier calls returned.
func (s *Stream) Write(fragment string) string {
	s.pending += fragment
	var b strings.Builder
	s.pending = s.sc.run(s.pending, false, &b)
	s.released.WriteString(b.String())
	return b.String()
}

// Flush ends the text: it returns everything still held back, redacted.
// The Stream can then start over with a new text; Text keeps everything.
func (s *Stream) Flush() string {
	var b strings.Builder
	s.sc.run(s.pending, true, &b)
	s.pending = ""
	s.sc = newScanner(s.r)
	s.released.WriteString(b.String())
	return b.String()
}

// Text returns everything released so far: the redacted text of a draft
// message to show in place of the previous one.
func (s *Stream) Text() string { return s.released.String() }

// held reports how many bytes are held back (for tests).
func (s *Stream) held() int { return len(s.pending) }
