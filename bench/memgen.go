package bench

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/opsgate/opsgate/memory/docs"
)

// Sizes of figure 10's generated memory.
const (
	genVocabulary = 4000 // words: the corpus's commonest, then made-up names
	genFromCorpus = 3000 // of which from memory/testdata/corpus
	genServices   = 300
	genChannels   = 50
	genUsers      = 200
)

// memGen generates memory documents of operations text for figure 10:
// 150 to 300 words each, drawn with a Zipf distribution (s = 1.07) over a
// vocabulary of genVocabulary words, most frequent first: the words of the
// labelled corpus (memory/testdata/corpus) by their frequency there, then
// made-up names standing for hosts, products and jargon. Each document is
// about a service of its namespace, has a type, trust, status and scope
// in proportions a team's memory might have, and an age of up to two
// years. The same seed gives the same documents.
type memGen struct {
	r          *rand.Rand
	cdf        []float64 // cdf[i]: the chance of drawing one of vocab[:i+1]
	vocab      []string
	namespaces []string
	services   []genService
	now        time.Time
}

type genService struct{ name, namespace string }

// genNamespaces are the corpus's namespaces, first, then more.
var genNamespaces = strings.Fields(`payments checkout search orders identity notifications monitoring data
	billing ml kafka edge catalog pricing storefront shipping ledger refunds partners inventory fulfillment
	cart risk messaging media auth ci platform reporting analytics loyalty returns tax fraud promotions
	reviews recommendations content gateway support`)

var genSuffixes = strings.Fields(`api worker web consumer sync gateway scheduler db cache exporter`)

// newMemGen reads the corpus's words under corpus.
func newMemGen(corpus string, seed uint64, now time.Time) (*memGen, error) {
	counts := map[string]int{}
	err := filepath.WalkDir(corpus, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, w := range genWords(string(b)) {
			counts[w]++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bench: read the memory corpus: %w", err)
	}
	if len(counts) < genFromCorpus {
		return nil, fmt.Errorf("bench: the memory corpus %s has %d words, want at least %d", corpus, len(counts), genFromCorpus)
	}
	vocab := make([]string, 0, genVocabulary)
	for w := range counts {
		vocab = append(vocab, w)
	}
	slices.SortFunc(vocab, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	vocab = vocab[:genFromCorpus]
	r := rand.New(rand.NewPCG(seed, 10))
	syl := strings.Fields("ka lo mi ne ra tu ve si po den tar vin mor gal bex quin dra fel hul zor")
	for len(vocab) < genVocabulary {
		var w strings.Builder
		for range 2 + r.IntN(3) {
			w.WriteString(syl[r.IntN(len(syl))])
		}
		if counts[w.String()] == 0 {
			counts[w.String()] = -1
			vocab = append(vocab, w.String())
		}
	}
	g := &memGen{r: r, cdf: zipfCDF(len(vocab), 1.07, 2), vocab: vocab, namespaces: genNamespaces, now: now}
	for i := range genServices {
		ns := genNamespaces[i%len(genNamespaces)]
		name := ns + "-" + genSuffixes[(i/len(genNamespaces))%len(genSuffixes)]
		if i >= len(genNamespaces)*len(genSuffixes) {
			name = fmt.Sprintf("%s-%d", name, i)
		}
		g.services = append(g.services, genService{name, ns})
	}
	return g, nil
}

// genWords are the words of a Markdown file's body (front matter left out),
// lower case: runs of letters, digits and inner hyphens, with a letter.
func genWords(text string) []string {
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		if _, body, ok := strings.Cut(rest, "\n---\n"); ok {
			text = body
		}
	}
	var ws []string
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-'
	}) {
		f = strings.Trim(f, "-")
		if len(f) >= 2 && strings.IndexFunc(f, unicode.IsLetter) >= 0 {
			ws = append(ws, f)
		}
	}
	return ws
}

// zipfCDF is the cumulative distribution of rand.Zipf's: P(k) ∝ (v+k)^-s
// for k in [0, n). A draw is a binary search of it, several times faster
// than rand.Zipf, whose rejection sampling takes logarithms and powers.
func zipfCDF(n int, s, v float64) []float64 {
	cdf := make([]float64, n)
	sum := 0.0
	for k := range n {
		sum += math.Pow(v+float64(k), -s)
		cdf[k] = sum
	}
	for k := range cdf {
		cdf[k] /= sum
	}
	return cdf
}

func (g *memGen) word() string {
	i, _ := slices.BinarySearch(g.cdf, g.r.Float64())
	return g.vocab[min(i, len(g.vocab)-1)]
}

// sentence is n words and a full stop.
func (g *memGen) sentence(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.word()
	}
	return strings.Join(ws, " ") + "."
}

// genTypes are the document types, as often as a team's memory has them.
var genTypes = []struct {
	t      docs.Type
	weight int
}{
	{docs.Runbook, 35}, {docs.IncidentLesson, 20}, {docs.ServiceContext, 12}, {docs.VerificationChecklist, 8},
	{docs.ToolUsageLesson, 8}, {docs.WorkspaceConvention, 5}, {docs.ConversationNote, 7}, {docs.UserPreference, 5},
}

func (g *memGen) docType() docs.Type {
	n := g.r.IntN(100)
	for _, t := range genTypes {
		if n < t.weight {
			return t.t
		}
		n -= t.weight
	}
	return docs.Runbook
}

// genChannel is the key of generated channel i.
func genChannel(i int) string { return fmt.Sprintf("slack:T1:C%03d", i) }

// genConversation is the key of thread i of channel ch.
func genConversation(ch, i int) string {
	return fmt.Sprintf("%s:17000000%02d.000100", genChannel(ch), i)
}

// genUser is generated person i.
func genUser(i int) string { return fmt.Sprintf("U%03d", i) }

// document i: a title naming its service, 150 to 300 words of content in
// sections of sentences and commands, tags, entities.
func (g *memGen) document(i int) docs.Document {
	svc := g.services[g.r.IntN(len(g.services))]
	t := g.docType()
	env := []string{"prod", "prod", "prod", "staging"}[g.r.IntN(4)]
	ents := map[string][]string{"service": {svc.name}, "namespace": {svc.namespace}, "environment": {env}}
	if g.r.IntN(3) == 0 {
		ents["workload"] = []string{"deployment/" + svc.name}
	}
	title := svc.name + " " + strings.TrimSuffix(g.sentence(3+g.r.IntN(4)), ".")
	if t == docs.IncidentLesson {
		inc := fmt.Sprintf("inc-%d", 3000+g.r.IntN(7000))
		ents["incident"] = []string{inc}
		title = strings.ToUpper(inc) + ": " + title
	}
	var b strings.Builder
	words := 150 + g.r.IntN(151)
	for n := 0; n < words; {
		fmt.Fprintf(&b, "## %s\n\n", strings.TrimSuffix(g.sentence(2+g.r.IntN(3)), "."))
		for range 1 + g.r.IntN(3) {
			k := 8 + g.r.IntN(12)
			b.WriteString(g.sentence(k))
			if g.r.IntN(4) == 0 {
				fmt.Fprintf(&b, " See %s in %s.", svc.name, svc.namespace)
				k += 4
			}
			b.WriteString("\n")
			n += k
		}
		if g.r.IntN(3) == 0 {
			fmt.Fprintf(&b, "\n    kubectl -n %s %s deployment/%s --context %s-euw1-a\n", svc.namespace,
				[]string{"rollout restart", "rollout status", "describe", "logs", "get"}[g.r.IntN(5)], svc.name, env)
			n += 6
		}
		b.WriteString("\n")
	}
	d := docs.Document{
		Scope: docs.WorkspaceScope, Path: fmt.Sprintf("generated/%s/%06d.md", svc.namespace, i), Title: title,
		Content: b.String(), Type: t, Tags: []string{g.word(), svc.namespace}, Entities: ents,
		Status: docs.Active, Trust: docs.AdminApproved, Author: "bench",
		UpdatedAt: g.now.Add(-time.Duration(g.r.Int64N(int64(2 * 365 * 24 * time.Hour)))),
	}
	switch t {
	case docs.UserPreference:
		d.Scope = docs.Scope{Kind: docs.User, Key: genUser(g.r.IntN(genUsers))}
	case docs.ConversationNote:
		d.Scope = docs.Scope{Kind: docs.Conversation, Key: genConversation(g.r.IntN(genChannels), g.r.IntN(20))}
	default:
		if g.r.IntN(100) < 15 {
			d.Scope = docs.Scope{Kind: docs.Channel, Key: genChannel(g.r.IntN(genChannels))}
		}
	}
	switch n := g.r.IntN(100); {
	case n < 20:
		d.Trust, d.Status = docs.AgentDraft, docs.Draft
	case n < 40:
		d.Trust = docs.UserAuthored
	case n < 50:
		d.Trust = docs.SystemSeeded
	}
	if g.r.IntN(100) < 3 {
		d.Status = docs.Archived
	}
	return d
}

// genQuestions are how on-call engineers ask about a service: %[1]s is
// the service, %[2]s its namespace, %[3]s a few words of the vocabulary.
var genQuestions = []string{
	"%[1]s 502 after deploy",
	"%[1]s crashloop in %[2]s",
	"how do I roll back %[1]s?",
	"%[1]s latency high, %[3]s",
	"what did we learn last time %[1]s went down",
	"%[2]s pods pending, %[1]s not scaling",
	"hey, %[1]s in %[2]s has been throwing errors since this morning's release and nobody on the team knows why — " +
		"is there a runbook or an incident note about %[3]s and what to check first before we roll it back?",
	"verify %[1]s after the failover",
	"who owns %[1]s and what does it depend on",
	"%[3]s %[1]s",
}

// question is the text of query i: one of the labelled questions (given)
// or, every other time, a generated one about a generated service.
func (g *memGen) question(i int, labelled []string) string {
	if i%2 == 0 && len(labelled) > 0 {
		return labelled[(i/2)%len(labelled)]
	}
	svc := g.services[g.r.IntN(len(g.services))]
	return fmt.Sprintf(genQuestions[g.r.IntN(len(genQuestions))], svc.name, svc.namespace,
		strings.TrimSuffix(g.sentence(2+g.r.IntN(3)), "."))
}

// repoRoot is the directory of the module's go.mod, found upwards from
// the working directory (the repository root for make bench, bench/ for
// go test).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/opsgate/opsgate\n") {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("bench: not inside the opsgate module (no go.mod of github.com/opsgate/opsgate above the working directory)")
		}
		dir = up
	}
}
