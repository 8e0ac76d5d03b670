package llmfake

import "unicode"

// splitWords splits s into fragments of one word each, a word carrying the
// white space before it, so that the fragments concatenate back to s.
func splitWords(s string) []string {
	var out []string
	start := 0
	prevSpace := false
	for i, r := range s {
		space := unicode.IsSpace(r)
		if i > 0 && prevSpace && !space && hasWord(s[start:i]) {
			out = append(out, s[start:i])
			start = i
		}
		prevSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func hasWord(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return true
		}
	}
	return false
}

// splitArguments splits tool-call arguments into at least three fragments
// of about four characters (a token), on rune boundaries. Arguments too short
// for three non-empty fragments are padded with empty ones, as servers do.
func splitArguments(s string) []string {
	runes := []rune(s)
	n := max(3, (len(runes)+3)/4)
	out := make([]string, 0, n)
	for i := range n {
		lo, hi := i*len(runes)/n, (i+1)*len(runes)/n
		out = append(out, string(runes[lo:hi]))
	}
	return out
}

// splitChars cuts s into chunks of alternately 1 and n runes.
func splitChars(s string, n int) []string {
	runes := []rune(s)
	var out []string
	for i, size := 0, 1; i < len(runes); i += size {
		size = 1 + (len(out)%2)*(n-1)
		size = min(size, len(runes)-i)
		out = append(out, string(runes[i:i+size]))
	}
	return out
}
