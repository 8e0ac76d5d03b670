package redact

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
)

// A pattern is a user detector (config redact.patterns).
type pattern struct {
	re *regexp.Regexp
	// ctx is `(?s:.)(re)`, used when re has assertions (\b, ^, $): it is
	// matched with the rune before the text as context, so that \b at the
	// start of what a Stream holds back means what it means in the whole
	// text. nil when re has none.
	ctx *regexp.Regexp
	// prefix matches a text that ends in a prefix of a possible match of
	// re (assertions dropped, so it may say yes too often, never too rarely):
	// the place a Stream must hold back from.
	prefix *regexp.Regexp
}

func compilePattern(src string) (pattern, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return pattern{}, err
	}
	tree, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return pattern{}, err
	}
	if minLen(tree) == 0 {
		return pattern{}, errors.New("matches the empty string")
	}
	pre := prefixOf(stripAssertions(tree))
	prefix, err := regexp.Compile(`(?:` + pre.String() + `)\z`)
	if err != nil {
		return pattern{}, fmt.Errorf("too complex to match across stream fragments: %w", err)
	}
	p := pattern{re: re, prefix: prefix}
	if hasAssertions(tree) {
		p.ctx = regexp.MustCompile(`(?s:.)(` + src + `)`)
	}
	return p, nil
}

// find returns the leftmost match in buf, whose preceding rune is pre (""
// at the start of the text); joined is pre+buf. Without final, a tail of
// buf that could still grow into a match before the leftmost match is
// returned as partial. Matches are cut at maxHold, like every hold.
func (p *pattern) find(buf, pre, joined string, final bool) (start, end int, st status) {
	ms, me := -1, -1
	if p.ctx != nil && pre != "" {
		if loc := p.ctx.FindStringSubmatchIndex(joined); loc != nil {
			ms, me = loc[2]-len(pre), loc[3]-len(pre)
		}
	} else if loc := p.re.FindStringIndex(buf); loc != nil {
		ms, me = loc[0], loc[1]
	}
	if !final {
		if loc := p.prefix.FindStringIndex(buf); loc != nil && loc[0] < len(buf) && (ms < 0 || loc[0] <= ms) {
			if len(buf)-loc[0] >= maxHold {
				return loc[0], loc[0] + maxHold, found
			}
			return loc[0], loc[0], partial
		}
	}
	if ms < 0 {
		return 0, 0, none
	}
	if me-ms > maxHold {
		me = ms + maxHold
	}
	return ms, me, found
}

func isAssertion(op syntax.Op) bool {
	switch op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	return false
}

func hasAssertions(re *syntax.Regexp) bool {
	if isAssertion(re.Op) {
		return true
	}
	for _, s := range re.Sub {
		if hasAssertions(s) {
			return true
		}
	}
	return false
}

// stripAssertions returns re with every assertion replaced by the empty
// string: it then matches a superset of what re matches.
func stripAssertions(re *syntax.Regexp) *syntax.Regexp {
	if isAssertion(re.Op) {
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	}
	c := *re
	c.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, s := range re.Sub {
		c.Sub[i] = stripAssertions(s)
	}
	return &c
}

// minLen is the length of the shortest text re matches (assertions count
// as empty; a pattern that cannot match counts as 1).
func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpNoMatch:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			n += minLen(s)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, s := range re.Sub {
			if m := minLen(s); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0 // empty, star, quest, assertions
}

// prefixOf returns a regexp for every prefix (the empty one included) of
// every text re matches; re has no assertions.
func prefixOf(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch:
		return re
	case syntax.OpLiteral:
		var acc *syntax.Regexp // (r0(r1(r2)?)?)?
		for i := len(re.Rune) - 1; i >= 0; i-- {
			l := &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{re.Rune[i]}, Flags: re.Flags}
			if acc != nil {
				l = op(syntax.OpConcat, l, acc)
			}
			acc = op(syntax.OpQuest, l)
		}
		return acc
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return op(syntax.OpQuest, re)
	case syntax.OpCapture, syntax.OpQuest:
		return prefixOf(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return op(syntax.OpConcat, op(syntax.OpStar, re.Sub[0]), prefixOf(re.Sub[0]))
	case syntax.OpRepeat: // x{n,m}: x{0,m-1} then a prefix of x
		switch re.Max {
		case -1:
			return op(syntax.OpConcat, op(syntax.OpStar, re.Sub[0]), prefixOf(re.Sub[0]))
		case 0:
			return &syntax.Regexp{Op: syntax.OpEmptyMatch}
		}
		rep := &syntax.Regexp{Op: syntax.OpRepeat, Min: 0, Max: re.Max - 1, Sub: re.Sub[:1]}
		return op(syntax.OpConcat, rep, prefixOf(re.Sub[0]))
	case syntax.OpConcat:
		n := len(re.Sub)
		acc := prefixOf(re.Sub[n-1])
		for i := n - 2; i >= 0; i-- {
			acc = op(syntax.OpAlternate, prefixOf(re.Sub[i]), op(syntax.OpConcat, re.Sub[i], acc))
		}
		return acc
	case syntax.OpAlternate:
		subs := make([]*syntax.Regexp, len(re.Sub))
		for i, s := range re.Sub {
			subs[i] = prefixOf(s)
		}
		return op(syntax.OpAlternate, subs...)
	}
	return &syntax.Regexp{Op: syntax.OpEmptyMatch}
}

func op(o syntax.Op, subs ...*syntax.Regexp) *syntax.Regexp {
	return &syntax.Regexp{Op: o, Sub: subs}
}
