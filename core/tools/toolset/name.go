// Package toolset holds the rules for a toolset's (MCP server's) name and
// for the globs of its annotations overrides on their own, so that what
// only validates configuration (internal/config) checks them without
// linking the MCP client.
package toolset

// ValidName reports whether s may be a toolset (server) name,
// ^[a-zA-Z0-9_-]{1,32}$: it becomes a prefix of model-facing tool names and
// a value the model passes to load_toolset. (A regexp's {1,32} compiles to
// 32 copies, 30 KB of heap at every start.)
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
