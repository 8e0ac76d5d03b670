package terminal

import "os"

// IsTerminal reports whether v is a file that is a character device (a
// TTY), without another dependency.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
