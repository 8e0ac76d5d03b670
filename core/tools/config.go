package tools

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/opsgate/opsgate/core/tools/toolset"
)

// ServerConfig describes one MCP server, which is one toolset. Exactly one
// of Command, URL and InProcess is set.
type ServerConfig struct {
	// Name is the toolset name: 1-32 of [a-zA-Z0-9_-], unique.
	Name string

	// Command, Args and Env start a stdio server as a child process. The
	// child does not inherit opsgate's environment, which holds its
	// secrets: only basics such as PATH, HOME, locale, proxies and
	// KUBECONFIG, plus Env.
	Command string
	Args    []string
	Env     map[string]string

	// URL is a streamable HTTP endpoint; Headers are sent with every
	// request (e.g. Authorization).
	URL     string
	Headers map[string]string

	// InProcess is a server in this process (tests, embedded servers). It
	// cannot be set from YAML.
	InProcess *server.MCPServer

	// CallTimeout bounds each call of this server's tools; 0 means the
	// host's (WithCallTimeout). A server known to run long jobs gets more
	// time without giving every server that much.
	CallTimeout time.Duration

	// Annotations override the risk the server's annotations give its
	// tools: only ever to a read for a tool that claims nothing, and to
	// destructive for any.
	Annotations Annotations
}

// Option configures a Host.
type Option func(*Host)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(h *Host) {
		if l != nil {
			h.log = l
		}
	}
}

// WithCallTimeout bounds each tool call of servers without a CallTimeout of
// their own (default 120 seconds, the tools.call_timeout key; 0 or less
// means no bound). The caller's ctx ends a call earlier. A call that hits
// the bound is cancelled and returns an IsError result saying so: the
// server is alive and stays in use.
func WithCallTimeout(d time.Duration) Option {
	return func(h *Host) { h.callTimeout = d }
}

// WithConnectTimeout bounds starting, initializing and listing the tools of
// a server (default 60 seconds, which leaves room for `npx -y` to download
// a server on first use; 0 or less means no bound beyond ctx).
func WithConnectTimeout(d time.Duration) Option {
	return func(h *Host) { h.connectTimeout = d }
}

// ValidName reports whether s may be a toolset (server) name
// (toolset.ValidName).
func ValidName(s string) bool { return toolset.ValidName(s) }

func (c ServerConfig) validate() error {
	if !ValidName(c.Name) {
		return fmt.Errorf("name %q: want 1 to 32 letters, digits, '_' or '-'", c.Name)
	}
	kinds := 0
	for _, set := range []bool{c.Command != "", c.URL != "", c.InProcess != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return errors.New("set exactly one of command, url and an in-process server")
	}
	if c.Command == "" && (len(c.Args) > 0 || len(c.Env) > 0) {
		return errors.New("args and env apply only to a command")
	}
	if c.CallTimeout < 0 {
		return fmt.Errorf("call timeout %s: want 0 (the host's) or more", c.CallTimeout)
	}
	if c.URL == "" && len(c.Headers) > 0 {
		return errors.New("headers apply only to a url")
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("env name %q is not valid", k)
		}
	}
	if err := c.Annotations.validate(); err != nil {
		return err
	}
	if c.URL != "" {
		// The URL is left out of these errors: it may carry a token.
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("url: want an absolute http:// or https:// URL")
		}
	}
	return nil
}
