package memory

import (
	"regexp"
	"slices"
	"strings"
	"sync"
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
		for _, w := range parts {
			w = numberPlural(w)
			if len([]rune(w)) < 2 || stopWords()[w] || seen[w] {
				continue
			}
			seen[w] = true
			ts = append(ts, term{word: w, rank: rarity(w, len(parts) > 1), at: len(ts)})
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

// numberPlural folds the plural of a number to the number: "502s" is
// "502".
func numberPlural(w string) string {
	if n := len(w); n > 1 && w[n-1] == 's' && strings.TrimLeft(w[:n-1], "0123456789") == "" {
		return w[:n-1]
	}
	return w
}

func notWord(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// words splits text as Terms does, keeping every word (stop words too), in
// order: what entity matching looks for multi-word names in.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), notWord)
}

// stopWords are English function words and the filler of chat messages:
// words that say nothing about which document is wanted.
var stopWords = sync.OnceValue(func() map[string]bool {
	return wordSet(`
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
something whats hows wheres whos keep keeps kept keeping weird bunch couple sure ideas totally im ive id youre were theyre dont doesnt didnt isnt arent wasnt
cant couldnt wouldnt shouldnt wont haven hasn weve youve theyve thats theres heres
`)
})

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// Question is what ranking reads from the text of a search.
type Question struct {
	Text    string
	Terms   []string // Terms(Text)
	Intents []Intent // General first
	words   []string // every word, stop words included, incident ids joined as "inc-N"
	envs    map[string]bool
}

// incidentID finds incident ids: INC-2142, inc 2142, INC2142.
var incidentID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\binc[-_ ]?(\d+)\b`) })

// NewQuestion reads a search text.
func NewQuestion(text string) Question {
	q := Question{Text: text, Terms: Terms(text), Intents: []Intent{General}, envs: map[string]bool{}}
	norm := incidentID().ReplaceAllString(text, " inc-$1 ")
	for _, f := range strings.Fields(strings.ToLower(norm)) {
		if strings.HasPrefix(f, "inc-") {
			q.words = append(q.words, strings.TrimRightFunc(f, notWord))
			continue
		}
		for _, w := range strings.FieldsFunc(f, notWord) {
			q.words = append(q.words, numberPlural(w))
		}
	}
	seen := map[Intent]bool{}
	for _, w := range q.words {
		if env := environment(w); env != "" {
			q.envs[env] = true
		}
		for _, in := range []Intent{Incident, History, Verify, Tooling, Convention, Context, Preference} {
			if !seen[in] && intentWords()[in][w] {
				seen[in] = true
				q.Intents = append(q.Intents, in)
			}
		}
		if strings.HasPrefix(w, "inc-") && !seen[History] {
			seen[History] = true
			q.Intents = append(q.Intents, History)
		}
	}
	return q
}

// environment folds the words for an environment: prod, production, prd
// and live are "prod"; staging, stage and stg are "staging"; dev and
// development are "dev". Anything else is "".
func environment(w string) string {
	switch {
	case w == "prod" || w == "production" || w == "prd" || w == "live" || strings.HasPrefix(w, "prod-"):
		return "prod"
	case w == "staging" || w == "stage" || w == "stg" || strings.HasPrefix(w, "staging-"):
		return "staging"
	case w == "dev" || w == "development":
		return "dev"
	case w == "qa" || w == "test" || w == "sandbox":
		return w
	}
	return ""
}

// names reports whether the question names the entity value v of kind.
func (q Question) names(kind, v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	if kind == "environment" {
		if env := environment(v); env != "" {
			return q.envs[env]
		}
	}
	if kind == "incident" {
		if m := incidentID().FindStringSubmatch(v); m != nil {
			return slices.Contains(q.words, "inc-"+m[1])
		}
	}
	if kind == "workload" {
		// "rollout/payments-api", "deploy/x": the name is what people say.
		if _, name, ok := strings.Cut(v, "/"); ok {
			v = name
		}
	}
	return containsRun(q.words, words(v))
}

// containsRun reports whether seq holds run as consecutive elements.
func containsRun(seq, run []string) bool {
	if len(run) == 0 {
		return false
	}
	for i := 0; i+len(run) <= len(seq); i++ {
		if slices.Equal(seq[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// stem folds a word's English inflections (-s, -es, -ed, -ing, and the
// doubled consonant before them) so that "restarting" meets "restarts"
// and "logged" meets "log": lighter than the stores' stemmers, enough for
// matching a question's terms against titles.
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			if suf == "s" && strings.ContainsRune("siu", rune(w[len(w)-2])) {
				break // pass, redis, status
			}
			w = w[:len(w)-len(suf)]
			break
		}
	}
	if n := len(w); n >= 4 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) {
		w = w[:n-1]
	}
	return w
}
