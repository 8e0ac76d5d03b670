package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load returns the validated configuration. The file is path when set (it
// must exist), else $OPSGATE_CONFIG (it must exist), else ./opsgate.yaml
// when present; with no file, defaults and the environment apply. Values
// are then overridden by OPSGATE_<SECTION>_<KEY> variables, the OPENAI_*
// fallbacks and dependent defaults are applied, and everything is
// validated. getenv looks up environment variables (os.Getenv in main).
func Load(path string, getenv func(string) string) (*Config, error) {
	c := Defaults()
	file, named := path, "--config"
	if file == "" {
		file, named = getenv(EnvConfig), EnvConfig
	}
	if file == "" {
		file, named = DefaultFile, ""
	}
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
		if err := c.parse(data, file, getenv); err != nil {
			return nil, err
		}
		c.File = file
	case errors.Is(err, fs.ErrNotExist) && named == "":
		// No file at all: defaults.
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("config: file %s (named by %s) does not exist", file, named)
	default:
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := c.applyEnv(getenv); err != nil {
		return nil, err
	}
	// Before the fallbacks: OPENAI_BASE_URL must not hide that the
	// variable written for llm.base_url is missing.
	if err := c.checkUnset(); err != nil {
		return nil, err
	}
	c.fillDefaults(getenv)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *Config) parse(data []byte, file string, getenv func(string) string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("config: %s: %w", file, err)
	}
	if doc.Kind == 0 {
		return nil // empty file
	}
	c.fileKeys, c.unset = map[string]int{}, map[string]unsetVars{}
	d := decoder{where: file, expand: true, getenv: getenv, lines: c.fileKeys, unset: c.unset}
	return d.decode(&doc, reflect.ValueOf(c).Elem(), "")
}

// EnvName returns the variable that overrides the key at path, e.g.
// OPSGATE_LLM_BASE_URL for llm.base_url.
func EnvName(path string) string {
	return "OPSGATE_" + strings.ToUpper(strings.ReplaceAll(path, ".", "_"))
}

// applyEnv applies OPSGATE_<SECTION>_<KEY> overrides. An empty variable
// counts as unset. Lists of plain values are comma-separated; structured
// values (tools.servers, schedules, maps) are YAML or JSON flow syntax.
func (c *Config) applyEnv(getenv func(string) string) error {
	root := reflect.ValueOf(c).Elem()
	for i := range root.NumField() {
		section := tagName(root.Type().Field(i))
		if section == "" {
			continue
		}
		sv := root.Field(i)
		if sv.Kind() != reflect.Struct {
			if err := c.override(section, sv, getenv); err != nil {
				return err
			}
			continue
		}
		for j := range sv.NumField() {
			key := tagName(sv.Type().Field(j))
			if key == "" {
				continue
			}
			if err := c.override(section+"."+key, sv.Field(j), getenv); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Config) override(path string, v reflect.Value, getenv func(string) string) error {
	name := EnvName(path)
	val := getenv(name)
	if val == "" {
		return nil
	}
	var n *yaml.Node
	switch {
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() != reflect.Struct:
		n = &yaml.Node{Kind: yaml.SequenceNode}
		for _, item := range strings.Split(val, ",") {
			if item = strings.TrimSpace(item); item != "" {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: item})
			}
		}
	case v.Kind() == reflect.Slice || v.Kind() == reflect.Map:
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(val), &doc); err != nil {
			return fmt.Errorf("config: %s: %s is not valid YAML or JSON: %v", path, name, err)
		}
		n = &doc
	default:
		n = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: val}
	}
	d := decoder{where: name}
	if err := d.decode(n, v, path); err != nil {
		return err
	}
	if c.sources == nil {
		c.sources = map[string]string{}
	}
	c.sources[path] = name
	return nil
}

// fillDefaults sets the defaults that depend on other keys.
func (c *Config) fillDefaults(getenv func(string) string) {
	l := &c.LLM
	baseFromEnv := false
	if l.BaseURL == "" {
		l.BaseURL, baseFromEnv = getenv("OPENAI_BASE_URL"), true
		c.setSource("llm.base_url", "OPENAI_BASE_URL", l.BaseURL)
	}
	// OPENAI_API_KEY is only sent where OpenAI's own variables point: to
	// OPENAI_BASE_URL or OpenAI. Another llm.base_url needs llm.api_key,
	// so a key is never leaked to an unrelated endpoint.
	if l.APIKey == "" {
		if key := getenv("OPENAI_API_KEY"); baseFromEnv || isOpenAI(l.BaseURL) {
			l.APIKey = key
			c.setSource("llm.api_key", "OPENAI_API_KEY", key)
		} else {
			c.openAIKeyWithheld = key != ""
		}
	}
	if l.BaseURL == "" {
		l.BaseURL, c.baseURLDefaulted = OllamaBaseURL, true
		if l.APIKey != "" {
			l.BaseURL = OpenAIBaseURL
		}
	}
	if l.Model == "" {
		l.Model = OpenAIModel
		if IsOllama(l.BaseURL) {
			l.Model = OllamaModel
		}
	}
	if c.Tools.DefaultToolsets == nil {
		for _, s := range c.Tools.Servers {
			c.Tools.DefaultToolsets = append(c.Tools.DefaultToolsets, s.Name)
		}
	}
	if c.Slack.APIURL != "" && !strings.HasSuffix(c.Slack.APIURL, "/") {
		c.Slack.APIURL += "/"
	}
}

func isOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Hostname() == "api.openai.com"
}

// IsOllama reports whether base looks like an Ollama endpoint (port 11434).
func IsOllama(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Port() == "11434"
}

// Source returns the environment variable that set the key at path, or "".
func (c *Config) Source(path string) string { return c.sources[path] }

func (c *Config) setSource(path, env, value string) {
	if value == "" {
		return
	}
	if c.sources == nil {
		c.sources = map[string]string{}
	}
	c.sources[path] = env
}

// OpenAIKeyWithheld reports whether OPENAI_API_KEY is set but not sent,
// because llm.base_url is neither OpenAI nor OPENAI_BASE_URL and
// llm.api_key is unset.
func (c *Config) OpenAIKeyWithheld() bool { return c.openAIKeyWithheld }

// BaseURLDefaulted reports whether llm.base_url is a built-in default
// (OpenAI or the local Ollama) that nobody set.
func (c *Config) BaseURLDefaulted() bool { return c.baseURLDefaulted }

// APIKeyOrigin says where llm.api_key came from ("set by OPENAI_API_KEY",
// "set in opsgate.yaml"), or why none is sent when OPENAI_API_KEY is
// withheld; "" otherwise. Advice about a rejected key shows it.
func (c *Config) APIKeyOrigin() string {
	switch {
	case c.LLM.APIKey == "" && c.openAIKeyWithheld:
		return "OPENAI_API_KEY is set but only sent to OpenAI or to OPENAI_BASE_URL"
	case c.LLM.APIKey == "":
		return ""
	case c.sources["llm.api_key"] != "":
		return "set by " + c.sources["llm.api_key"]
	case c.File != "":
		return "set in " + c.File
	}
	return ""
}
