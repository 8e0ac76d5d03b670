package policy

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/opsgate/opsgate/core"
)

// Error is a problem in a policy file, printed "FILE:LINE: key: what is
// wrong" so that an editor can jump to it. Load returns the first one.
type Error struct {
	File string
	Line int    // 0 when the problem has no line (an unreadable file)
	Key  string // the key's path: rules[1].match.tool
	Msg  string
	Err  error // the cause, when there is one
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
	case e.Key != "":
		return fmt.Sprintf("%s: %s: %s", e.File, e.Key, e.Msg)
	default:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
}

func (e *Error) Unwrap() error { return e.Err }

// Kind is core.KindInvalid: the policy file is not valid.
func (e *Error) Kind() core.Kind { return core.KindInvalid }

// yamlLine finds the line in yaml.v3's syntax errors ("yaml: line 3: …").
// Compiled on the first error, not at every start.
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// syntaxError turns a YAML parse error into an Error of file.
func syntaxError(file string, err error) *Error {
	if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Key: "syntax", Msg: m[2], Err: err}
	}
	return &Error{File: file, Key: "syntax", Msg: err.Error(), Err: err}
}
