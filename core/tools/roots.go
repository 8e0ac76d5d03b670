package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Roots is which directories each tool server serves, for the policy's
// path spellings (docs/design.md §17): roots: on the server's entry in
// tools.servers, and what the filesystem server answers to
// list_allowed_directories once it runs. Safe for concurrent use: the
// policy reads it on every call, Learn adds to it.
type Roots struct {
	mu   sync.RWMutex
	dirs map[string][]string
	// ask, when set, is asked once per server (asked) for its directories.
	ask   func(server string) []string
	asked map[string]bool
}

// NewRoots starts from the configured roots of each server (roots: of its
// entry in tools.servers), made absolute against the working directory
// (where opsgate starts the servers).
func NewRoots(configured map[string][]string) *Roots {
	rs := &Roots{dirs: map[string][]string{}}
	for server, dirs := range configured {
		rs.add(server, dirs...)
	}
	return rs
}

func (rs *Roots) add(server string, dirs ...string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, d := range dirs {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		d = filepath.ToSlash(d)
		if !slices.Contains(rs.dirs[server], d) {
			rs.dirs[server] = append(rs.dirs[server], d)
		}
	}
}

// Of returns the directories server serves (policy.Options.Roots).
func (rs *Roots) Of(server string) []string {
	rs.mu.Lock()
	ask := rs.ask != nil && !rs.asked[server]
	if ask {
		rs.asked[server] = true
	}
	f := rs.ask
	rs.mu.Unlock()
	if ask {
		rs.add(server, f(server)...)
	}
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	return rs.dirs[server]
}

// Learn makes Of ask, once per server, the directories it serves and
// adds them: the first call classified for a server finds it running.
func (rs *Roots) Learn(ask func(server string) []string) {
	rs.mu.Lock()
	rs.ask, rs.asked = ask, map[string]bool{}
	rs.mu.Unlock()
}

// AskRoots asks the host's servers that offer list_allowed_directories
// (the filesystem server) which directories they serve, for Roots.Learn.
// A server that cannot be asked keeps what the configuration says; the
// policy still matches the cleaned and relative spellings.
func (host *Host) AskRoots(log *slog.Logger) func(server string) []string {
	return func(server string) []string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		list, err := host.Tools(ctx, server)
		if err != nil {
			return nil
		}
		for _, t := range list {
			if t.Remote != "list_allowed_directories" && t.Name != "list_allowed_directories" {
				continue
			}
			res, err := host.Call(ctx, t, json.RawMessage(`{}`), nil)
			if err != nil || res.IsError {
				log.Warn("policy: could not learn the directories a server serves", "server", server, "err", err, "result", res.Content)
				return nil
			}
			return allowedDirectories(res.Content)
		}
		return nil
	}
}

// allowedDirectories parses list_allowed_directories' answer: "Allowed
// directories:" and then one absolute path a line.
func allowedDirectories(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if filepath.IsAbs(l) {
			out = append(out, l)
		}
	}
	return out
}
