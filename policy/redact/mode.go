package redact

// A mode is a multi-line secret the scanner is inside of. In a mode the
// scanner redacts as the text arrives (a private key is dropped byte by
// byte, a Secret's data map line by line) instead of holding the whole
// structure back.
type mode struct {
	kind   modeKind
	indent int      // modeYAML: column of the data: key
	lex    jsonLex  // modeJSON: inside a string or not
	want   jsonWant // modeJSON: what may come next
	key    bool     // modeJSON: the current string is a key
	tail   []byte   // modePEM: the last bytes, to see the END line
	drain  bool     // modePEM: ended mid-line; dropping the rest of the line
}

type modeKind uint8

const (
	modeNone modeKind = iota
	modePEM           // inside a private key block
	modeYAML          // inside the data: map of a Kubernetes Secret
	modeJSON          // inside the "data": {…} object of a Kubernetes Secret
)
