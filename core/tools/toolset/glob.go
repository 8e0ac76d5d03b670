package toolset

import (
	"errors"
	"fmt"
	"path"
)

// CheckGlob reports what is wrong with a glob over a server's tool names
// (the annotations of a server's entry), or nil. The syntax is path.Match's:
// *, ? and [a-z].
func CheckGlob(g string) error {
	if g == "" {
		return errors.New(`empty glob: give a tool name or a pattern such as "get_*"`)
	}
	if _, err := path.Match(g, ""); err != nil {
		return fmt.Errorf("%q is not a valid glob (use *, ? and [a-z], and close every [)", g)
	}
	return nil
}
