package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// pathSpellings are the forms of an argument value that a rule's pattern
// is tried against, so that a rule cannot be sidestepped by spelling a
// path another way (docs/design.md §17): the value as written; cleaned
// (path.Clean: "./prod-b.txt" is "prod-b.txt", "a/../prod" is "prod");
// with a leading "./" when relative; and, for a path inside one of roots
// (the directories the tool server serves), relative to that root with and
// without "./", and for a relative path, joined to each root. A rule
// matches if any form does: more forms only ever make a tightening rule
// apply more often.
func pathSpellings(s string, roots []string) []string {
	if s == "" {
		return []string{s}
	}
	out := make([]string, 0, 4)
	add := func(f string) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	add(s)
	clean := path.Clean(s)
	add(clean)
	if !strings.HasPrefix(clean, "/") {
		if clean != "." && clean != ".." && !strings.HasPrefix(clean, "../") {
			add("./" + clean)
			for _, r := range roots {
				add(path.Join(path.Clean(r), clean))
			}
		}
		return out
	}
	for _, r := range roots {
		r = path.Clean(r)
		var rel string
		switch {
		case clean == r:
			rel = "."
		case r == "/":
			rel = clean[1:]
		case strings.HasPrefix(clean, r+"/"): // not a sibling such as /srv/sandbox2
			rel = clean[len(r)+1:]
		default:
			continue
		}
		add(rel)
		if rel != "." {
			add("./" + rel)
		}
	}
	return out
}

// pathArgWords are the words that make an argument a path for the
// warning of "policy check": path, file, dir, source, destination and
// their usual short forms, anywhere in the argument's last key.
var pathArgWords = []string{"path", "file", "dir", "folder", "source", "src", "destination", "dest", "target"}

// pathLike reports whether an argument named key (dotted) looks like it
// holds a path.
func pathLike(key string) bool {
	last := strings.ToLower(key[strings.LastIndexByte(key, '.')+1:])
	for _, w := range pathArgWords {
		if strings.Contains(last, w) {
			return true
		}
	}
	return false
}

// absoluteSidestep returns the glob to suggest when glob, matched against
// a path argument, cannot match an absolute path (it starts with neither
// "/", "*" nor "?"), so that "/srv/…/prod-b.txt" escapes a "prod*" rule
// unless the server's roots are known; "" when glob is fine.
func absoluteSidestep(glob string) string {
	if glob == "" || strings.ContainsAny(glob[:1], "/*?") {
		return ""
	}
	return "*/" + strings.TrimPrefix(glob, "./")
}

// Warnings are what "policy check" warns about without refusing the file:
// an args glob on a path-like argument that an absolute path would
// sidestep, each as FILE:LINE: key: what to write instead.
func (p *Policy) Warnings() []string { return slices.Clone(p.warnings) }

// warnSidestep records the warning for an args entry, if it needs one.
func (b *builder) warnSidestep(path, value, key string, line int) {
	if strings.HasPrefix(value, "re:") || !pathLike(path) {
		return
	}
	safe := absoluteSidestep(value)
	if safe == "" {
		return
	}
	b.p.warnings = append(b.p.warnings, fmt.Sprintf(
		"%s:%d: %s: warning: glob %q on a path argument matches only relative paths (and absolute ones inside the server's known roots); an absolute path elsewhere sidesteps it: write %q",
		b.r.file, line, key, value, safe))
}
