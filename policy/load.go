package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/opsgate/opsgate/core"
	"gopkg.in/yaml.v3"
)

// Platforms a person has identities on; the chat ones can receive cards,
// and an identity may also be a schedule's.
var (
	personPlatforms   = []string{"slack", "telegram", "discord", "terminal", "api"}
	chatPlatforms     = []string{"slack", "telegram", "discord"}
	identityPlatforms = []string{"slack", "telegram", "discord", "terminal", "api", "schedule"}
)

var sectionKeys = []string{"people", "roles", "defaults", "rules", "redact", "limits", "visibility"}

// Load reads and validates a policy file. An empty file name gives the
// behaviour without a policy (core.DefaultPolicy with opts' approvers).
// Any problem is an *Error naming the file, the line and the key.
func Load(file string, opts Options) (*Policy, error) {
	if file == "" {
		return build("", opts, nil)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		msg := err.Error()
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			msg = pe.Err.Error()
		}
		return nil, &Error{File: file, Msg: "cannot read the policy file: " + msg, Err: err}
	}
	return Parse(file, data, opts)
}

// Parse is Load of a file's contents; file names it in errors.
func Parse(file string, data []byte, opts Options) (*Policy, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(file, err)
	}
	return build(file, opts, &doc)
}

// builder turns a YAML document into a Policy, stopping at the first
// problem.
type builder struct {
	r            reader
	p            *Policy
	identityLine map[string]int
	ruleLine     map[string]int
}

func build(file string, opts Options, doc *yaml.Node) (*Policy, error) {
	b := &builder{
		r: reader{file: file},
		p: &Policy{
			file: file, opts: opts, hasFile: doc != nil,
			identities: map[string]string{}, chats: map[string][]string{}, roles: map[string][]string{},
			defaults: askSpec{quorum: 1, self: true},
			redact:   Redact{ModelInput: true},
		},
		identityLine: map[string]int{}, ruleLine: map[string]int{},
	}
	if doc != nil {
		if err := b.document(doc); err != nil {
			return nil, err
		}
	}
	if err := b.schedules(); err != nil {
		return nil, err
	}
	return b.p, nil
}

func (b *builder) document(doc *yaml.Node) error {
	var top *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		top = resolve(doc.Content[0])
	}
	if top == nil || isNull(top) {
		return nil
	}
	sections := map[string]*yaml.Node{}
	err := b.r.fields(top, "", sectionKeys, func(name string, v *yaml.Node, _ string) error {
		sections[name] = v
		return nil
	})
	if err != nil {
		return err
	}
	// Names are defined before anything refers to them, whatever the
	// order of the sections in the file.
	steps := []struct {
		name string
		read func(*yaml.Node) error
	}{
		{"people", b.people}, {"roles", b.roleSection}, {"defaults", b.defaultSection},
		{"rules", b.ruleSection}, {"redact", b.redactSection}, {"limits", b.limitSection},
		{"visibility", b.visibilitySection},
	}
	for _, s := range steps {
		if n := sections[s.name]; n != nil {
			if err := s.read(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkName vets the name of a person, a role or a rule.
func (b *builder) checkName(k *yaml.Node, key string) error {
	switch {
	case strings.TrimSpace(k.Value) == "":
		return b.r.errf(k, key, "a name must not be empty")
	case strings.Contains(k.Value, ":"):
		return b.r.errf(k, key, "a name must not contain \":\" (that is how identities such as slack:U0ALICE are written)")
	}
	return nil
}

func (b *builder) people(n *yaml.Node) error {
	return b.r.pairs(n, "people", func(k, v *yaml.Node, key string) error {
		if err := b.checkName(k, key); err != nil {
			return err
		}
		name := k.Value
		b.p.people = append(b.p.people, name)
		if isNull(v) {
			return nil
		}
		return b.r.fields(v, key, personPlatforms, func(platform string, idn *yaml.Node, sub string) error {
			id, err := b.r.name(idn, sub)
			if err != nil {
				return err
			}
			identity := platform + ":" + id
			if other, ok := b.p.identities[identity]; ok {
				return b.r.errf(idn, sub, "identity %s already belongs to %s (line %d); one identity is one person", identity, other, b.identityLine[identity])
			}
			b.p.identities[identity] = name
			b.identityLine[identity] = idn.Line
			if slices.Contains(chatPlatforms, platform) {
				b.p.chats[name] = append(b.p.chats[name], identity)
			}
			return nil
		})
	})
}

func (b *builder) isPerson(name string) bool { return slices.Contains(b.p.people, name) }

func (b *builder) roleSection(n *yaml.Node) error {
	return b.r.pairs(n, "roles", func(k, v *yaml.Node, key string) error {
		if err := b.checkName(k, key); err != nil {
			return err
		}
		if b.isPerson(k.Value) {
			return b.r.errf(k, key, "%q is also a person; roles and people share one set of names", k.Value)
		}
		items, err := b.r.list(v, key)
		if err != nil {
			return err
		}
		var members []string
		for i, item := range items {
			sub := fmt.Sprintf("%s[%d]", key, i)
			m, err := b.r.name(item, sub)
			if err != nil {
				return err
			}
			if !b.isPerson(m) {
				return b.r.errf(item, sub, "unknown person %q (people: %s)", m, listOf(b.p.people))
			}
			if !slices.Contains(members, m) {
				members = append(members, m)
			}
		}
		b.p.roles[k.Value] = members
		b.p.roleNames = append(b.p.roleNames, k.Value)
		return nil
	})
}

// persons reads a list of roles, people and identities (approvers, who)
// and resolves it to persons, in order, each once.
func (b *builder) persons(n *yaml.Node, key string) (names, persons []string, err error) {
	items, err := b.r.list(n, key)
	if err != nil {
		return nil, nil, err
	}
	for i, item := range items {
		sub := fmt.Sprintf("%s[%d]", key, i)
		name, err := b.r.name(item, sub)
		if err != nil {
			return nil, nil, err
		}
		resolved, msg := b.resolve(name)
		if msg != "" {
			return nil, nil, b.r.errf(item, sub, "%s", msg)
		}
		names = append(names, name)
		for _, p := range resolved {
			if !slices.Contains(persons, p) {
				persons = append(persons, p)
			}
		}
	}
	return names, persons, nil
}

// resolve expands one name: an identity is its person, a role its
// members, a person itself. msg says what is wrong.
func (b *builder) resolve(name string) (persons []string, msg string) {
	if strings.Contains(name, ":") {
		if msg := checkIdentity(name, identityPlatforms); msg != "" {
			return nil, msg
		}
		return []string{b.p.Person(name)}, ""
	}
	if members, ok := b.p.roles[name]; ok {
		return members, ""
	}
	if b.isPerson(name) {
		return []string{name}, ""
	}
	return nil, fmt.Sprintf("unknown role or person %q (roles: %s; people: %s)", name, listOf(b.p.roleNames), listOf(b.p.people))
}

// checkIdentity vets "platform:id"; the message says what is wrong.
func checkIdentity(s string, platforms []string) string {
	platform, id, _ := strings.Cut(s, ":")
	if !slices.Contains(platforms, platform) || id == "" {
		return fmt.Sprintf("%q is not an identity: want platform:id with platform one of %s", s, strings.Join(platforms, ", "))
	}
	return ""
}

func listOf(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func (b *builder) redactSection(n *yaml.Node) error {
	return b.r.fields(n, "redact", []string{"patterns", "model_input"}, func(name string, v *yaml.Node, key string) error {
		if name == "model_input" {
			var err error
			b.p.redact.ModelInput, err = b.r.boolean(v, key)
			return err
		}
		items, err := b.r.list(v, key)
		if err != nil {
			return err
		}
		for i, item := range items {
			sub := fmt.Sprintf("%s[%d]", key, i)
			s, err := b.r.name(item, sub)
			if err != nil {
				return err
			}
			re, err := regexp.Compile(s)
			if err != nil {
				return b.r.errf(item, sub, "bad regex %q: %v", s, err)
			}
			b.p.redact.Patterns = append(b.p.redact.Patterns, re)
		}
		return nil
	})
}

func (b *builder) limitSection(n *yaml.Node) error {
	return b.r.fields(n, "limits", []string{"runs_per_person_per_minute"}, func(_ string, v *yaml.Node, key string) error {
		var err error
		b.p.perMinute, err = b.r.integer(v, key, 0)
		return err
	})
}

// schedules resolves Options.ScheduleApprovers, which come from the
// opsgate configuration, against the people and roles of the file.
func (b *builder) schedules() error {
	b.p.base = core.DefaultPolicy{Approvers: b.p.opts.PlatformApprovers, Place: b.p.opts.Place}
	names := make([]string, 0, len(b.p.opts.ScheduleApprovers))
	for name := range b.p.opts.ScheduleApprovers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		entries := b.p.opts.ScheduleApprovers[name]
		var persons []string
		for _, e := range entries {
			if !b.p.hasFile && !strings.Contains(e, ":") {
				return fmt.Errorf("policy: schedule %q: approvers: %q is not an identity such as slack:U0BOB (roles and people need a policy file)", name, e)
			}
			resolved, msg := b.resolve(e)
			if msg != "" {
				return fmt.Errorf("policy: schedule %q: approvers: %s", name, msg)
			}
			persons = append(persons, resolved...)
		}
		if b.p.base.Schedules == nil {
			b.p.base.Schedules, b.p.schedules = map[string][]string{}, map[string][]string{}
		}
		b.p.base.Schedules[name], b.p.schedules[name] = persons, entries
	}
	return nil
}
