package memory

import (
	"slices"
	"strings"
	"unicode"
)

// MaxTerms is how many terms a question contributes to the full-text
// search at most. A longer question keeps its rarer-looking terms.
const MaxTerms = 32

// Terms are the words of text worth searching for: lower case runs of
// letters and digits, without English stop words, chat filler ("hey",
// "honestly", "anything", …) and one-character tokens, each once, in the
// order they first appear. The store ORs them, so a long natural-language
// question still matches a runbook that shares only a few of its words.
//
// At most MaxTerms are kept: those that look rarest first (with digits,
// like 502 or 2142; parts of a compound, like payments-api; then longer
// words), still in the question's order.
func Terms(text string) []string {
	type term struct {
		word string
		rank int
		at   int
	}
	var ts []term
	seen := map[string]bool{}
	for _, field := range strings.Fields(strings.ToLower(text)) {
		parts := strings.FieldsFunc(field, notWord)
		compound := len(parts) > 1
		for _, w := range parts {
			if len([]rune(w)) < 2 || stopWords[w] || seen[w] {
				continue
			}
			seen[w] = true
			ts = append(ts, term{word: w, rank: rarity(w, compound), at: len(ts)})
		}
	}
	if len(ts) == 0 {
		return nil
	}
	if len(ts) > MaxTerms {
		slices.SortStableFunc(ts, func(a, b term) int { return b.rank - a.rank })
		ts = ts[:MaxTerms]
		slices.SortFunc(ts, func(a, b term) int { return a.at - b.at })
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.word
	}
	return out
}

// rarity orders words by how likely they are to single out a document:
// numbers (status codes, incident ids) first, then parts of compound
// names (payments-api, rollout/checkout), then by length.
func rarity(w string, compound bool) int {
	r := min(len(w), 12)
	if strings.ContainsFunc(w, unicode.IsDigit) {
		r += 20
	}
	if compound {
		r += 10
	}
	return r
}

func notWord(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// words splits text as Terms does, keeping every word (stop words too), in
// order: what entity matching looks for multi-word names in.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), notWord)
}

// stopWords are English function words and the filler of chat messages:
// words that say nothing about which document is wanted.
var stopWords = wordSet(`
a about above after again against all almost also am among an and any anybody anyone anything
anyway anywhere are aren around as at be became because become been before being below between
both but by can cannot cant could couldn did didn do does doesn doing don done down during each
either else enough etc even ever every everybody everyone everything few for from further get gets
getting go goes going gone got gotta had hadn has hasn have haven having he her here hers herself
him himself his how however if in into is isn it its itself just least less let lets like ll made
make makes many may me might mine more most much must my myself need needs neither never no nobody
none nor not nothing now of off often on once one only or other others our ours ourselves out over
own per perhaps quite rather re really said same say says see seem seemed seems seen shall she
should shouldn since so some somebody someone something sometime sometimes somewhere still such
than that thats the their theirs them themselves then there these they thing things this those
though through thus to too toward towards under until up upon us use used using ve very via want
wanted wants was wasn way we well were weren what whatever when whenever where wherever whether
which while who whoever whole whom whose why will with within without won would wouldn yet you
your yours yourself yourselves

hey hi hello hiya yo folks guys team everyone all please pls plz thanks thank thx ty cheers ok
okay yeah yep yes nope sure so honestly basically actually literally totally kinda sorta maybe
probably possibly definitely anything wrote write written down remember remembers recall know knows
knew think thought guess wonder wondering idea ideas question questions ask asking quick quickly
help helps tell telling told look looks looking looked seems sort kind lol btw fyi imo tbh asap
again already right just now today yesterday tonight morning afternoon evening last
someone somebody anybody anyone people person anyway also else bit lot lots little stuff
something whats hows wheres whos im ive id youre were theyre dont doesnt didnt isnt arent wasnt
cant couldnt wouldnt shouldnt wont haven hasn weve youve theyve thats theres heres
`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
