package config

import (
	"reflect"
	"slices"
	"strings"
)

// KeyPaths returns every key that an OPSGATE_<SECTION>_<KEY> variable can
// set (EnvName), as section.key ("llm.base_url"), or the section alone for
// a section that is a list (schedules). It walks the same fields as the
// environment overrides, so the two cannot disagree.
func KeyPaths() []string {
	var out []string
	root := reflect.TypeOf(Config{})
	for i := range root.NumField() {
		section := tagName(root.Field(i))
		if section == "" {
			continue
		}
		st := root.Field(i).Type
		if st.Kind() != reflect.Struct {
			out = append(out, section)
			continue
		}
		for j := range st.NumField() {
			if key := tagName(st.Field(j)); key != "" {
				out = append(out, section+"."+key)
			}
		}
	}
	return out
}

// Variables named OPSGATE_… that are not configuration keys.
const (
	// EnvConfig names the configuration file when --config does not.
	EnvConfig = "OPSGATE_CONFIG"
	// EnvLogLevel is the log level when --log-level does not say.
	EnvLogLevel = "OPSGATE_LOG_LEVEL"
)

// otherEnv are OPSGATE_ variables that other programs read: the API
// token the README's curl examples export, and the test suite's. opsgate
// reads none of them, but they are no mistake either.
var otherEnv = []string{"OPSGATE_TOKEN", "OPSGATE_PG_BIN", "OPSGATE_TEST_DATABASE_URL", "OPSGATE_CHROMIUM"}

// KnownEnv returns every OPSGATE_ variable opsgate reads: EnvConfig,
// EnvLogLevel and one per key (EnvName of each KeyPaths).
func KnownEnv() []string {
	out := []string{EnvConfig, EnvLogLevel}
	for _, p := range KeyPaths() {
		out = append(out, EnvName(p))
	}
	return out
}

// UnknownEnv returns a warning for each OPSGATE_ variable of environ
// ("NAME=value", as os.Environ) that opsgate does not read, a misspelling
// that would otherwise be ignored without a word: with the known variable
// closest to it, or else the known ones of its section, or else what the
// known ones are. The warnings are sorted by name, one per name.
func UnknownEnv(environ []string) []string {
	known := KnownEnv()
	var names []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "OPSGATE_") && !slices.Contains(known, name) && !slices.Contains(otherEnv, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]string, 0, len(names))
	for _, name := range names {
		msg := name + " is set, but opsgate reads no such variable; "
		if k := closest(known, name); k != "" {
			out = append(out, msg+"did you mean "+k+"?")
			continue
		}
		var section []string
		for _, k := range known {
			if prefix := sectionPrefix(k); prefix != "" && strings.HasPrefix(name, prefix) {
				section = append(section, k)
			}
		}
		if len(section) > 0 {
			out = append(out, msg+"the "+sectionPrefix(section[0])+" variables are "+strings.Join(section, ", "))
			continue
		}
		var sections []string
		root := reflect.TypeFor[Config]()
		for i := range root.NumField() {
			if s := tagName(root.Field(i)); s != "" {
				sections = append(sections, strings.ToUpper(s))
			}
		}
		out = append(out, msg+"it reads "+EnvConfig+", "+EnvLogLevel+" and OPSGATE_<SECTION>_<KEY> for each configuration key, SECTION one of "+
			strings.Join(sections, ", "))
	}
	return out
}

// sectionPrefix is OPSGATE_<SECTION>_ of a key's variable, "" for one that
// is a whole section (OPSGATE_SCHEDULES) or no key's.
func sectionPrefix(env string) string {
	for _, p := range KeyPaths() {
		if EnvName(p) == env {
			if section, _, ok := strings.Cut(p, "."); ok {
				return EnvName(section) + "_"
			}
		}
	}
	return ""
}
