package policy

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// glob is a compiled pattern of docs/design.md §11: "*" matches any run of
// characters, "/" included (so "*prod*" matches "/srv/prod/app.yaml",
// which path.Match would not), "?" one character, "[a-z]" and "[!a-z]"
// one character of (not of) a class, and "\" quotes the next character.
// A glob matches the whole string. Common shapes get a fast path.
type glob struct {
	shape globShape
	lit   string // exact, prefix, suffix, contains
	toks  []token
}

type globShape uint8

const (
	shapeExact    globShape = iota // abc
	shapeAny                       // *
	shapePrefix                    // abc*
	shapeSuffix                    // *abc
	shapeContains                  // *abc*
	shapeGeneral
)

type token struct {
	kind  tokenKind
	r     rune
	class *charClass
}

type tokenKind uint8

const (
	tokLit  tokenKind = iota
	tokOne            // ?
	tokStar           // *
	tokClass
)

type charClass struct {
	negated bool
	ranges  [][2]rune
}

func (c *charClass) has(r rune) bool {
	for _, rg := range c.ranges {
		if rg[0] <= r && r <= rg[1] {
			return !c.negated
		}
	}
	return c.negated
}

// compileGlob parses a pattern; the error says what is wrong with it.
func compileGlob(pat string) (*glob, error) {
	var toks []token
	for i := 0; i < len(pat); {
		r, w := utf8.DecodeRuneInString(pat[i:])
		switch r {
		case '*':
			if len(toks) == 0 || toks[len(toks)-1].kind != tokStar {
				toks = append(toks, token{kind: tokStar})
			}
			i += w
		case '?':
			toks = append(toks, token{kind: tokOne})
			i += w
		case '\\':
			if i+w >= len(pat) {
				return nil, errors.New(`ends with "\" (quote a backslash as "\\")`)
			}
			q, qw := utf8.DecodeRuneInString(pat[i+w:])
			toks = append(toks, token{kind: tokLit, r: q})
			i += w + qw
		case '[':
			c, n, err := parseClass(pat[i+w:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokClass, class: c})
			i += w + n
		default:
			toks = append(toks, token{kind: tokLit, r: r})
			i += w
		}
	}
	return shapeOf(toks), nil
}

// parseClass parses what follows "[" up to and including "]" and returns
// how many bytes it used.
func parseClass(s string) (*charClass, int, error) {
	c := &charClass{}
	i := 0
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		c.negated = true
		i++
	}
	next := func() (rune, error) {
		if i >= len(s) {
			return 0, errors.New(`"[" is not closed by "]"`)
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		i += w
		if r == '\\' {
			if i >= len(s) {
				return 0, errors.New(`"[" is not closed by "]"`)
			}
			r, w = utf8.DecodeRuneInString(s[i:])
			i += w
		}
		return r, nil
	}
	for {
		if i >= len(s) {
			return nil, 0, errors.New(`"[" is not closed by "]"`)
		}
		if s[i] == ']' {
			if len(c.ranges) == 0 {
				return nil, 0, errors.New(`"[]" is an empty character class`)
			}
			return c, i + 1, nil
		}
		lo, err := next()
		if err != nil {
			return nil, 0, err
		}
		hi := lo
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			i++
			if hi, err = next(); err != nil {
				return nil, 0, err
			}
			if hi < lo {
				return nil, 0, errors.New("character range " + string(lo) + "-" + string(hi) + " is backwards")
			}
		}
		c.ranges = append(c.ranges, [2]rune{lo, hi})
	}
}

// shapeOf picks a fast path when the pattern is literal text with at most
// a leading and a trailing star.
func shapeOf(toks []token) *glob {
	g := &glob{shape: shapeGeneral, toks: toks}
	lead := len(toks) > 0 && toks[0].kind == tokStar
	trail := len(toks) > 1 && toks[len(toks)-1].kind == tokStar
	mid := toks
	if lead {
		mid = mid[1:]
	}
	if trail {
		mid = mid[:len(mid)-1]
	}
	var lit strings.Builder
	for _, t := range mid {
		if t.kind != tokLit {
			return g
		}
		lit.WriteRune(t.r)
	}
	g.lit = lit.String()
	switch {
	case lead && len(toks) == 1:
		g.shape = shapeAny
	case lead && trail:
		g.shape = shapeContains
	case lead:
		g.shape = shapeSuffix
	case trail:
		g.shape = shapePrefix
	default:
		g.shape = shapeExact
	}
	return g
}

func (g *glob) match(s string) bool {
	switch g.shape {
	case shapeExact:
		return s == g.lit
	case shapeAny:
		return true
	case shapePrefix:
		return strings.HasPrefix(s, g.lit)
	case shapeSuffix:
		return strings.HasSuffix(s, g.lit)
	case shapeContains:
		return strings.Contains(s, g.lit)
	}
	return matchTokens(g.toks, s)
}

// matchTokens is the classic wildcard match: on a mismatch, go back to the
// last star and let it swallow one more character. Every other token is
// one character, so this is linear in practice and never exponential.
func matchTokens(toks []token, s string) bool {
	pi, si := 0, 0
	star, resume := -1, 0
	for si < len(s) {
		if pi < len(toks) && toks[pi].kind == tokStar {
			star, resume = pi, si
			pi++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[si:])
		if pi < len(toks) && one(toks[pi], r) {
			pi++
			si += w
			continue
		}
		if star < 0 {
			return false
		}
		_, rw := utf8.DecodeRuneInString(s[resume:])
		resume += rw
		pi, si = star+1, resume
	}
	for pi < len(toks) && toks[pi].kind == tokStar {
		pi++
	}
	return pi == len(toks)
}

func one(t token, r rune) bool {
	switch t.kind {
	case tokLit:
		return t.r == r
	case tokOne:
		return true
	case tokClass:
		return t.class.has(r)
	}
	return false
}
