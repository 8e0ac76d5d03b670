package policy

import "testing"

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pat, s string
		want   bool
	}{
		{"", "", true},
		{"", "a", false},
		{"k8s", "k8s", true},
		{"k8s", "k8s-prod", false},
		{"*", "", true},
		{"*", "/any/thing", true},
		{"*prod*", "/srv/prod/app.yaml", true},
		{"*prod*", "/srv/staging/app.yaml", false},
		{"prod*", "prod-eu", true},
		{"prod*", "preprod", false},
		{"*_delete", "pods_delete", true},
		{"*_delete", "pods_delete_all", false},
		{"/srv/*/app.yaml", "/srv/a/b/app.yaml", true},
		{"/srv/*/app.yaml", "/srv/a/b/app.yml", false},
		{"pod?", "pods", true},
		{"pod?", "pod", false},
		{"pod?", "podé", true},
		{"*a*b*c", "xxaxxbxxbxxc", true},
		{"*a*b*c", "xxaxxcxxb", false},
		{"a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[!a-c]x", "dx", true},
		{"[^a-c]x", "ax", false},
		{"prod-[0-9][0-9]", "prod-42", true},
		{`\*`, "*", true},
		{`\*`, "x", false},
		{`a\?`, "a?", true},
		{"*.yaml", "dir/x.yaml", true},
	} {
		g, err := compileGlob(tc.pat)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tc.pat, err)
			continue
		}
		if got := g.match(tc.s); got != tc.want {
			t.Errorf("glob %q on %q = %v, want %v", tc.pat, tc.s, got, tc.want)
		}
	}
}

func TestBadGlob(t *testing.T) {
	for pat, want := range map[string]string{
		"[":      `"[" is not closed by "]"`,
		"[a-":    `"[" is not closed by "]"`,
		"x[]":    `"[]" is an empty character class`,
		"[z-a]":  "character range z-a is backwards",
		`tail\`:  `ends with "\" (quote a backslash as "\\")`,
		`[a\`:    `"[" is not closed by "]"`,
		"ok[!]x": `"[]" is an empty character class`,
	} {
		if _, err := compileGlob(pat); err == nil || err.Error() != want {
			t.Errorf("compileGlob(%q) = %v, want %s", pat, err, want)
		}
	}
}
