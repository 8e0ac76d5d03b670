package memory

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/opsgate/opsgate/memory/docs"
)

// frontMatterKeys are the keys a document's YAML front matter may have
// (docs/design.md §14); any other key is an error, so a typo ("tittle") is not
// silently ignored.
var frontMatterKeys = []string{"title", "type", "tags", "entities", "scope", "trust", "status"}

// frontMatter is a Markdown file's YAML front matter, in the order
// ExportDir writes it.
type frontMatter struct {
	Title    string               `yaml:"title,omitempty"`
	Type     string               `yaml:"type,omitempty"`
	Tags     []string             `yaml:"tags,omitempty,flow"`
	Entities map[string]oneOrMany `yaml:"entities,omitempty"`
	Scope    string               `yaml:"scope,omitempty"`
	Trust    string               `yaml:"trust,omitempty"`
	Status   string               `yaml:"status,omitempty"`
}

// oneOrMany is an entity's values: a string or a list of strings.
type oneOrMany []string

func (o *oneOrMany) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*o = oneOrMany{s}
		return nil
	case yaml.SequenceNode:
		var ss []string
		if err := n.Decode(&ss); err != nil {
			return err
		}
		*o = ss
		return nil
	}
	return fmt.Errorf("line %d: want a string or a list of strings", n.Line)
}

func (o oneOrMany) MarshalYAML() (any, error) {
	if len(o) == 1 {
		return o[0], nil
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, v := range o {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
	}
	return n, nil
}

// splitFrontMatter separates a Markdown file's leading front matter (the
// lines between a first line "---" and the next "---" or "...") from its
// body. Blank lines at the start of the body are dropped. A file without
// front matter is all body; an unclosed one is an error.
func splitFrontMatter(file []byte) (front []byte, body string, err error) {
	file = bytes.TrimPrefix(file, []byte("\ufeff"))
	first, rest, _ := cutLine(file)
	if string(first) != "---" {
		return nil, trimBlankLines(string(file)), nil
	}
	var fm []byte
	for len(rest) > 0 {
		var l []byte
		l, rest, _ = cutLine(rest)
		if s := string(l); s == "---" || s == "..." {
			return fm, trimBlankLines(string(rest)), nil
		}
		fm = append(append(fm, l...), '\n')
	}
	return nil, "", fmt.Errorf("front matter: no closing --- line")
}

// cutLine returns the first line of b without its line ending, and the
// rest after it.
func cutLine(b []byte) (line, rest []byte, found bool) {
	line, rest, found = bytes.Cut(b, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), rest, found
}

func trimBlankLines(s string) string {
	for {
		l, rest, ok := strings.Cut(s, "\n")
		if !ok || strings.TrimSpace(l) != "" {
			return s
		}
		s = rest
	}
}

// parseDocument reads a Markdown file at rel (a slash path relative to the
// import directory) into the document Import saves: front matter, the
// defaults of docs/design.md §14 (an admin_approved workspace runbook titled by its
// first "# " heading or its file name), and the body as content.
func parseDocument(rel string, file []byte) (docs.Document, error) {
	raw, body, err := splitFrontMatter(file)
	if err != nil {
		return docs.Document{}, err
	}
	var fm frontMatter
	if len(bytes.TrimSpace(raw)) > 0 {
		if fm, err = decodeFrontMatter(raw); err != nil {
			return docs.Document{}, err
		}
	}
	d := docs.Document{Path: rel, Content: body, Title: strings.TrimSpace(fm.Title), Tags: fm.Tags}
	if d.Title == "" {
		d.Title = defaultTitle(rel, body)
	}
	d.Type = docs.Runbook
	if fm.Type != "" {
		if d.Type = docs.Type(fm.Type); !d.Type.Valid() {
			return docs.Document{}, fmt.Errorf("front matter: type %q: want one of %s", fm.Type, joinValues(docs.Types))
		}
	}
	d.Scope = docs.WorkspaceScope
	if fm.Scope != "" {
		if d.Scope, err = docs.ParseScope(fm.Scope); err != nil {
			return docs.Document{}, fmt.Errorf("front matter: %w", err)
		}
	}
	d.Trust = docs.AdminApproved
	if fm.Trust != "" {
		if d.Trust = docs.Trust(fm.Trust); !d.Trust.Valid() {
			return docs.Document{}, fmt.Errorf("front matter: trust %q: want one of %s", fm.Trust, joinValues(docs.Trusts))
		}
	}
	switch docs.Status(fm.Status) {
	case docs.Archived:
		d.Status = docs.Archived
	case docs.Draft:
		d.Status = docs.Draft
	case "", docs.Active:
		d.Status = docs.Active
		if d.Trust == docs.AgentDraft {
			d.Status = docs.Draft // an agent's draft is never more than a draft
		}
	default:
		return docs.Document{}, fmt.Errorf("front matter: status %q: want active, draft or archived", fm.Status)
	}
	d.Tags = cleanTags(d.Tags)
	if len(fm.Entities) > 0 {
		es := map[string][]string{}
		for k, vs := range fm.Entities {
			k = strings.ToLower(strings.TrimSpace(k))
			es[k] = append(es[k], vs...)
		}
		d.Entities = cleanEntities(es)
	}
	return d, nil
}

// decodeFrontMatter decodes raw strictly: a mapping with known keys only.
func decodeFrontMatter(raw []byte) (frontMatter, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(raw, &n); err != nil {
		return frontMatter{}, fmt.Errorf("front matter: %s", fileLines(err))
	}
	if len(n.Content) == 0 {
		return frontMatter{}, nil
	}
	root := n.Content[0]
	if root.Kind != yaml.MappingNode {
		return frontMatter{}, fmt.Errorf("front matter: line %d: want key: value pairs", root.Line+1)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if !slices.Contains(frontMatterKeys, k.Value) {
			return frontMatter{}, fmt.Errorf("front matter: line %d: unknown key %q (known keys: %s)",
				k.Line+1, k.Value, strings.Join(frontMatterKeys, ", "))
		}
	}
	var fm frontMatter
	if err := root.Decode(&fm); err != nil {
		return frontMatter{}, fmt.Errorf("front matter: %s", fileLines(err))
	}
	return fm, nil
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// fileLines turns the front-matter line numbers of a yaml error into the
// file's (the opening --- is line 1) and drops the "yaml: " prefixes.
func fileLines(err error) string {
	msg := strings.ReplaceAll(err.Error(), "yaml: ", "")
	return yamlLineRE().ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(m, "line "))
		return "line " + strconv.Itoa(n+1)
	})
}

// defaultTitle is the text of body's first "# " heading, else the file
// name without its extension.
func defaultTitle(rel, body string) string {
	inFence := false
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
		}
		if !inFence && strings.HasPrefix(t, "# ") {
			if h := strings.TrimSpace(strings.TrimPrefix(t, "# ")); h != "" {
				return h
			}
		}
	}
	base := path.Base(rel)
	return strings.TrimSpace(strings.TrimSuffix(base, path.Ext(base))) // as a front matter title is
}

// renderDocument is d as a Markdown file with front matter, which
// parseDocument reads back as d (same scope, title, type, tags, entities,
// trust and status).
func renderDocument(d docs.Document) ([]byte, error) {
	fm := frontMatter{Title: d.Title, Type: string(d.Type), Tags: d.Tags, Scope: d.Scope.String(), Trust: string(d.Trust)}
	if d.Status != docs.Active {
		fm.Status = string(d.Status)
	}
	if len(d.Entities) > 0 {
		fm.Entities = map[string]oneOrMany{}
		for k, vs := range d.Entities {
			fm.Entities[k] = oneOrMany(vs)
		}
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(fm); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	b.WriteString("---\n")
	b.WriteString(d.Content)
	return b.Bytes(), nil
}

// cleanTags trims tags and drops empty and repeated ones, keeping the
// order.
func cleanTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// cleanEntities lower-cases entity kinds and values (retrieval matches
// them against the lower-cased query) and drops empty and repeated ones.
func cleanEntities(es map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, vs := range es {
		k = strings.ToLower(strings.TrimSpace(k))
		if k == "" {
			continue
		}
		for _, v := range vs {
			if v = strings.ToLower(strings.TrimSpace(v)); v != "" && !slices.Contains(out[k], v) {
				out[k] = append(out[k], v)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func joinValues[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
