package memory

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/opsgate/opsgate/policy/redact"
)

// Finding is one reason the safety scanner refuses a write (docs/design.md §14).
// Kind is one of the Finding* constants; Detail says what was found,
// never the offending text itself when that is a secret.
type Finding struct {
	Kind   string
	Detail string
}

// Finding kinds.
const (
	FindingSecret    = "secret"
	FindingInjection = "prompt injection"
	FindingLogDump   = "raw log dump"
	FindingTooLarge  = "too large"
)

// String is the finding as people and the model read it, e.g.
// "secret: aws_access_key".
func (f Finding) String() string { return f.Kind + ": " + f.Detail }

// Flagged reports whether the finding is worth a memory.safety.flagged
// event besides the blocked write: somebody tried to store a secret or to
// plant instructions.
func (f Finding) Flagged() bool { return f.Kind == FindingSecret || f.Kind == FindingInjection }

// findings joins findings for a message: "secret: jwt; too large: …".
func findings(fs []Finding) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = f.String()
	}
	return strings.Join(s, "; ")
}

// The limits of one memory document. MaxContentBytes is
// memory.max_doc_bytes' default (Options.MaxDocBytes).
const (
	MaxContentBytes = 16 << 10
	MaxTitleChars   = 200
	MaxLines        = 400
)

// The raw log dump heuristic: more than logDumpMinLines non-blank lines of
// which more than logDumpShare look like log lines.
const (
	logDumpMinLines = 40
	logDumpShare    = 0.6
)

// Scan is the safety scanner every write passes first (memory tools,
// /remember, import): secrets (Options.Secrets, else the built-in
// detectors of policy/redact), prompt-injection phrases, raw log dumps and
// size limits. No findings means the write may go ahead; any finding
// blocks it.
func (m *Memory) Scan(title, content string) []Finding {
	var fs []Finding
	text := title + "\n" + content
	for _, kind := range m.secretKinds(text) {
		fs = append(fs, Finding{FindingSecret, kind})
	}
	for _, phrase := range injections(text) {
		fs = append(fs, Finding{FindingInjection, fmt.Sprintf("%q", phrase)})
	}
	if n, logs := logLines(content); n > logDumpMinLines && float64(logs) > logDumpShare*float64(n) {
		fs = append(fs, Finding{FindingLogDump, fmt.Sprintf("%d lines, %d look like log lines; summarise instead", n, logs)})
	}
	if limit := m.opt.MaxDocBytes; len(content) > limit {
		fs = append(fs, Finding{FindingTooLarge, fmt.Sprintf("%d KiB > %d KiB", (len(content)+1023)>>10, (limit+1023)>>10)})
	}
	if n := utf8.RuneCountInString(title); n > MaxTitleChars {
		fs = append(fs, Finding{FindingTooLarge, fmt.Sprintf("title of %d characters > %d", n, MaxTitleChars)})
	}
	if n := strings.Count(strings.TrimRight(content, "\n"), "\n") + 1; n > MaxLines {
		fs = append(fs, Finding{FindingTooLarge, fmt.Sprintf("%d lines > %d", n, MaxLines)})
	}
	return fs
}

// secretKinds runs the secret detectors over text and returns the kinds of
// [REDACTED:<kind>] markers they added, in order of first appearance: a
// marker that was already in the text (a document about redaction) is
// not a secret.
func (m *Memory) secretKinds(text string) []string {
	redacted := m.opt.Secrets
	if redacted == nil {
		redacted = (*redact.Redactor)(nil).String
	}
	before := markerCounts(text)
	var kinds []string
	seen := map[string]bool{}
	after := markerCounts(redacted(text))
	for _, mk := range after.order {
		if after.n[mk] > before.n[mk] && !seen[mk] {
			seen[mk] = true
			kinds = append(kinds, mk)
		}
	}
	return kinds
}

// markerRE and the other patterns of this package are compiled on first
// use: serve links memory in but may never scan a document, and a regexp
// compiled at init costs its memory from the start.
var markerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[REDACTED:([A-Za-z0-9_.-]+)\]`) })

type counts struct {
	n     map[string]int
	order []string
}

func markerCounts(s string) counts {
	c := counts{n: map[string]int{}}
	for _, m := range markerRE().FindAllStringSubmatch(s, -1) {
		if c.n[m[1]] == 0 {
			c.order = append(c.order, m[1])
		}
		c.n[m[1]]++
	}
	return c
}

// injectionREs are phrases that address the model rather than inform it.
// Words may be separated by any run of white space; zero-width characters
// are removed before matching. "act as" counts only as an imperative (at
// the start of a sentence or after "please", "now", "you will", "you
// must"), and "you are now" only when it gives the model a new identity,
// so that runbook prose ("the gateway will act as a proxy", "you are now
// connected") passes.
var injectionREs = sync.OnceValue(func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range []string{
		`\b(?:ignore|disregard|forget|override|abandon|set\s+aside)\s+(?:all\s+|any\s+|everything\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+)?(?:previous|prior|above|earlier|preceding|system|original|existing|initial)\s+(?:\w+\s+)?` + injectionNouns + `\b`,
		`\bdisregard\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?` + injectionNouns + `\b`,
		// Paraphrases that ask for a tool call past the gate.
		`\b(?:call|run|execute|invoke|use)\s+(?:the\s+)?[\w.-]+\s+(?:tool\s+)?without\s+(?:asking\s+(?:for\s+)?|requesting\s+|waiting\s+for\s+|any\s+|an?\s+)?(?:approval|confirmation|permission)\b`,
		`\b(?:bypass|circumvent|skip|disable|turn\s+off|get\s+around)\s+(?:the\s+|any\s+|all\s+)?(?:approval\s+gate|approvals?|approval\s+cards?|guardrails?|safety\s+(?:checks?|rules))\b`,
		`\byou\s+are\s+now\s+(?:a|an|my|no\s+longer|free|unrestricted|jailbroken|dan|in\s+\w+\s+mode)\b`,
		`\bsystem\s+prompt\b`,
		`(?:^|[.!?:;]\s*|\n\s*|\bplease\s+|\bnow\s+|\byou\s+(?:will|must|should)\s+)act\s+as\s+(?:if\b|an?\b|the\b|my\b)`,
		`\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|let)\s+the\s+user\b`,
		`\bnew\s+instructions\s*:`,
	} {
		out = append(out, regexp.MustCompile(`(?i)`+p))
	}
	return out
})

// injectionNouns are what an injection tells the model to drop.
const injectionNouns = `(?:instructions|prompts?|rules|directions|directives|guidance|guidelines|context|orders|commands|constraints|messages)`

var zeroWidth = strings.NewReplacer("\u200b", "", "\u200c", "", "\u200d", "", "\u2060", "", "\ufeff", "", "\u00ad", "")

// injections returns the prompt-injection phrases in text, each once,
// lower case with single spaces.
func injections(text string) []string {
	text = zeroWidth.Replace(text)
	var out []string
	seen := map[string]bool{}
	for _, re := range injectionREs() {
		for _, m := range re.FindAllString(text, -1) {
			phrase := strings.ToLower(strings.Join(strings.Fields(strings.TrimLeft(m, ".!?:;")), " "))
			for _, lead := range []string{"please ", "now ", "you will ", "you must ", "you should "} {
				if strings.HasPrefix(phrase, lead) && strings.Contains(phrase, "act as") {
					phrase = strings.TrimPrefix(phrase, lead)
				}
			}
			if !seen[phrase] {
				seen[phrase] = true
				out = append(out, phrase)
			}
		}
	}
	return out
}

// logLineREs recognise what a log line looks like: a timestamp at the
// start, a level word, a stack frame, a JSON log record.
var logLineREs = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		// 2024-05-01T12:00:00, 2024/05/01 12:00:00, [2024-05-01 12:00:00.123]
		regexp.MustCompile(`^\s*[\[(]?\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}`),
		// 12:00:00.123 …
		regexp.MustCompile(`^\s*[\[(]?\d{2}:\d{2}:\d{2}`),
		// syslog: May  1 12:00:00
		regexp.MustCompile(`^\s*(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s+\d{1,2}\s+\d{2}:\d{2}:\d{2}`),
		// klog: I0501 12:00:00.000000
		regexp.MustCompile(`^[IWEF]\d{4}\s+\d{2}:\d{2}:\d{2}`),
		// level words, and logfmt levels
		regexp.MustCompile(`\b(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|PANIC)\b|\blevel=\w+`),
		// stack frames: Java/JS "at x.y(…)", Python "File "…", line 3", Go
		// "/path/file.go:12 +0x1d" and "goroutine 1 [running]:"
		regexp.MustCompile(`^\s+at\s+\S+[(:]|^\s*File\s+".*",\s+line\s+\d+|\.go:\d+(?:\s+\+0x[0-9a-f]+)?\s*$|^goroutine\s+\d+\s+\[`),
		// JSON log records
		regexp.MustCompile(`^\s*\{.*"(?:level|lvl|severity|msg|message|ts|time|timestamp|@timestamp)"\s*:`),
	}
})

// logLines counts content's non-blank lines and those that look like log
// lines.
func logLines(content string) (lines, logs int) {
	for _, l := range strings.Split(content, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		lines++
		for _, re := range logLineREs() {
			if re.MatchString(l) {
				logs++
				break
			}
		}
	}
	return lines, logs
}
