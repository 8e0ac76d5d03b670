package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/adapters/httpapi"
	"github.com/opsgate/opsgate/core"
	"github.com/opsgate/opsgate/core/llm"
	"github.com/opsgate/opsgate/core/tools"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/memory"
	"github.com/opsgate/opsgate/policy"
)

const doctorHelp = `Usage: opsgate doctor

Check the configuration, reach the LLM, start every MCP server and list
its tools with their risk, open the store and check that its audit log is
still append-only and that its hash chain holds (as audit verify), and
check that opsgate serve has something to serve.
Prints what is wrong and how to fix it; exits 1 when anything is.
`

// Bounds of doctor's checks: an unreachable endpoint must not hang it.
const (
	doctorLLMTimeout   = 20 * time.Second
	doctorToolsTimeout = 60 * time.Second // npx may download a server first
)

// report prints doctor's findings and counts the problems.
type report struct {
	w        io.Writer
	problems int
}

func (r *report) ok(check, format string, args ...any) {
	fmt.Fprintf(r.w, "ok    %-7s %s\n", check, fmt.Sprintf(format, args...))
}

func (r *report) warn(check, format string, args ...any) {
	fmt.Fprintf(r.w, "warn  %-7s %s\n", check, fmt.Sprintf(format, args...))
}

func (r *report) fail(check, fix, format string, args ...any) {
	r.problems++
	fmt.Fprintf(r.w, "FAIL  %-7s %s\n", check, fmt.Sprintf(format, args...))
	if fix != "" {
		fmt.Fprintf(r.w, "              fix: %s\n", fix)
	}
}

func (r *report) detail(format string, args ...any) {
	fmt.Fprintf(r.w, "              %s\n", fmt.Sprintf(format, args...))
}

func (e *env) doctor(ctx context.Context, args []string) int {
	if code, ok := e.parse(flag.NewFlagSet("doctor", flag.ContinueOnError), args, doctorHelp); !ok {
		return code
	}
	r := &report{w: e.stdout}
	fmt.Fprintf(r.w, "opsgate %s doctor\n", version)
	if !e.initLog(slog.LevelWarn) {
		r.fail("config", "", "the log level is invalid (see above); nothing else was checked")
		return exitError
	}
	cfg, err := e.loadConfig()
	if err != nil {
		// The same text as the other commands print, as a finding.
		r.fail("config", "correct that key (or the environment variable it names); nothing else was checked", "%v", err)
		fmt.Fprintf(r.w, "%d problem(s) found\n", r.problems)
		return exitError
	}
	if cfg.File != "" {
		r.ok("config", "%s", cfg.File)
	} else {
		r.ok("config", "no file (%s absent); built-in defaults and the environment", config.DefaultFile)
	}
	for _, w := range e.unknownEnv() {
		r.warn("config", "%s", w)
	}
	e.checkLLM(ctx, r, cfg)
	e.checkTools(ctx, r, cfg)
	e.checkStore(ctx, r, cfg)
	tokens := e.checkTokens(ctx, r, cfg)
	e.checkRest(r, cfg, tokens)
	if r.problems > 0 {
		fmt.Fprintf(r.w, "%d problem(s) found\n", r.problems)
		return exitError
	}
	fmt.Fprintln(r.w, "all checks passed")
	return exitOK
}

func (e *env) checkLLM(ctx context.Context, r *report, cfg *config.Config) {
	model, err := newModel(cfg)
	if err != nil {
		r.fail("llm", "fix llm.* in the configuration", "%v", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, doctorLLMTimeout)
	defer cancel()
	if err := model.Ping(ctx); err != nil {
		r.fail("llm", llmHint(cfg, err), "%s at %s: %v", cfg.LLM.Model, cfg.LLM.BaseURL, err)
		return
	}
	r.ok("llm", "%s at %s", cfg.LLM.Model, cfg.LLM.BaseURL)
}

// llmHint says how to fix a failed reach of the model endpoint, from what
// the failure is (its status, its kind) rather than from its wording.
func llmHint(cfg *config.Config, err error) string {
	status := 0
	var me *core.ModelError
	if errors.As(err, &me) {
		status = me.StatusCode
	}
	var opErr *net.OpError
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return keyHint(cfg)
	case status >= 500:
		return "the endpoint, or a proxy in front of it, reports a server error: check that the model server is up and healthy"
	case errors.Is(err, llm.ErrNotOpenAIAPI):
		return fmt.Sprintf("llm.base_url (%s) answers with a web page or text, not the OpenAI API: point it at the API itself (it usually ends in /v1), past any login page or proxy", cfg.LLM.BaseURL)
	case status == http.StatusNotFound:
		return fmt.Sprintf("llm.base_url (%s) has no OpenAI API at that path: it usually ends in /v1 (Ollama: http://HOST:11434/v1)", cfg.LLM.BaseURL)
	case errors.Is(err, context.DeadlineExceeded):
		return "the endpoint took the connection but did not answer: check that the model server is up and not overloaded"
	case config.IsOllama(cfg.LLM.BaseURL) && errors.As(err, &opErr) && cfg.BaseURLDefaulted():
		return fmt.Sprintf("start Ollama (ollama serve) and pull the model (ollama pull %s), or set llm.base_url, or OPENAI_API_KEY to use OpenAI", cfg.LLM.Model)
	case config.IsOllama(cfg.LLM.BaseURL) && errors.As(err, &opErr):
		return fmt.Sprintf("start Ollama (ollama serve) there and pull the model (ollama pull %s), or correct llm.base_url", cfg.LLM.Model)
	default:
		return "check that llm.base_url is reachable from here and speaks the OpenAI API (it should answer GET <base_url>/models)"
	}
}

// keyHint is the fix for a rejected or missing API key.
func keyHint(cfg *config.Config) string {
	switch {
	case cfg.LLM.APIKey == "" && cfg.OpenAIKeyWithheld():
		return "OPENAI_API_KEY is only sent to OpenAI or to OPENAI_BASE_URL, not to this llm.base_url: set llm.api_key (or OPSGATE_LLM_API_KEY) for this endpoint"
	case cfg.LLM.APIKey == "":
		return "this endpoint wants an API key: set llm.api_key (or OPSGATE_LLM_API_KEY)"
	case cfg.APIKeyOrigin() != "":
		return "the endpoint rejected the key: check llm.api_key (" + cfg.APIKeyOrigin() + ")"
	}
	return "the endpoint rejected the key: check llm.api_key"
}

func (e *env) checkTools(ctx context.Context, r *report, cfg *config.Config) {
	if len(cfg.Tools.Servers) == 0 {
		r.warn("tools", "no MCP servers configured (tools.servers): opsgate can talk but not look at or change anything")
		return
	}
	host, err := newTools(cfg, e.log, tools.WithConnectTimeout(doctorToolsTimeout))
	if err != nil {
		r.fail("tools", "fix tools.servers in the configuration", "%v", err)
		return
	}
	defer host.Close()
	for i, s := range cfg.Tools.Servers {
		list, err := host.Tools(ctx, s.Name)
		if err != nil {
			r.fail("tools", toolsHint(i, s, err), "%s: cannot start or reach the server: %v", s.Name, err)
			continue
		}
		approval := 0
		for _, t := range list {
			if t.Risk.NeedsApproval() {
				approval++
			}
		}
		r.ok("tools", "%s: %d tools, %d need approval (%s)", s.Name, len(list), approval, serverWhere(s))
		for _, t := range list {
			r.detail("%-28s %s", t.Name, riskLabel(t))
		}
		checkAnnotations(ctx, r, host, s, list)
	}
	r.ok("tools", "loaded by default: %s", joinOr(cfg.Tools.DefaultToolsets, "none"))
}

func serverWhere(s config.MCPServer) string {
	if s.URL != "" {
		return s.URL
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}

func riskLabel(t core.Tool) string {
	configured := t.RiskSource == core.RiskConfigured
	switch {
	case t.Risk == core.RiskRead && configured:
		return "read (configured)"
	case t.Risk == core.RiskRead:
		return "read"
	case configured:
		return string(t.Risk) + " (configured), needs approval"
	default:
		return string(t.Risk) + " (needs approval)"
	}
}

func toolsHint(i int, s config.MCPServer, err error) string {
	key := fmt.Sprintf("tools.servers[%d]", i)
	switch {
	case s.Command != "" && (errors.Is(err, exec.ErrNotFound) || strings.Contains(err.Error(), "executable file not found") || strings.Contains(err.Error(), "no such file")):
		return fmt.Sprintf("install %q or correct %s.command (it must be an executable on opsgate's PATH)", s.Command, key)
	case s.Command != "":
		return fmt.Sprintf("run `%s` by hand to see why it fails; check %s.args and %s.env", serverWhere(s), key, key)
	default:
		return fmt.Sprintf("check that the server is running and that %s.url (%s) is reachable from here; add %s.headers if it needs authentication", key, s.URL, key)
	}
}

func (e *env) checkStore(ctx context.Context, r *report, cfg *config.Config) {
	loc := storeLocation(cfg)
	store, err := openStore(ctx, cfg)
	var schemaErr *core.SchemaError
	switch {
	case errors.As(err, &schemaErr):
		r.fail("store", schemaFix(loc), "%v", err)
		// As audit verify: the chain may show an edit made meanwhile.
		if s, _, err := memory.OpenForInspection(ctx, cfg.Store.URL); err == nil {
			checkChain(ctx, r, s, loc, "")
			s.Close()
		}
		return
	case err != nil && loc.Kind == memory.Postgres:
		r.fail("store", "check that the server in store.url is reachable from here, that the user and password are right, "+
			"that the database exists, and that no newer opsgate migrated it", "%v", err)
		return
	case err != nil:
		r.fail("store", "check that the directory of store.url exists or can be created and is writable, and that no newer opsgate migrated it", "%v", err)
		return
	}
	defer store.Close()
	if p, ok := store.(pinger); ok {
		if err := p.Ping(ctx); err != nil {
			r.fail("store", "check the permissions and free space of "+loc.Where(), "%v", err)
			return
		}
	}
	m, ok := store.(migrator)
	if !ok {
		r.ok("store", "%s", loc)
		return
	}
	v, err := m.SchemaVersion(ctx)
	if err != nil {
		r.fail("store", "", "%v", err)
		return
	}
	r.ok("store", "%s (schema version %d)", loc, v)
	// Open checked the schema already; checking again here keeps this line
	// true even if Open stops doing so.
	if err := m.CheckSchema(ctx); err != nil {
		r.fail("audit", schemaFix(loc), "%v", err)
		return
	}
	// Triggers in place do not show an edit made while one was dropped
	// and then re-created: the hash chain does.
	checkChain(ctx, r, store, loc, "audit table and its append-only triggers in place; ")
}

// checkChain reports what the audit hash chain of store says, as audit
// verify does; a chain that holds is ok after okPrefix. With okPrefix ""
// the store's schema failed and was reported: only a break is added (an
// audit table that is gone cannot be read at all).
func checkChain(ctx context.Context, r *report, store core.Store, loc memory.Location, okPrefix string) {
	chain, err := core.VerifyAudit(ctx, store)
	switch {
	case err != nil && okPrefix == "":
	case err != nil:
		r.fail("audit", "", "reading the audit log: %v", err)
	case chain.Break != nil:
		r.fail("audit", "find out who changed "+loc.Where()+" and restore it from a backup; opsgate audit verify says the same",
			"%s", chain)
	case okPrefix != "":
		r.ok("audit", "%s%s", okPrefix, chain)
	}
}

// checkTokens counts the API tokens in use (returned, for nothingToServe)
// and warns about those whose person the policy file does not map (they
// have no role).
func (e *env) checkTokens(ctx context.Context, r *report, cfg *config.Config) int {
	store, err := openStore(ctx, cfg)
	if err != nil {
		return 0 // checkStore said why
	}
	defer store.Close()
	ts, ok := store.(httpapi.TokenStore)
	if !ok {
		return 0
	}
	list, err := ts.Tokens(ctx)
	if err != nil {
		r.fail("api", "", "listing the API tokens: %v", err)
		return 0
	}
	active := activeTokens(list, time.Now())
	pol, err := policy.Load(cfg.Policy.File, policyOptions(cfg))
	if err != nil {
		return active // checkPolicy says why
	}
	for _, t := range list {
		if t.RevokedAt.IsZero() && cfg.Policy.File != "" && unmapped(pol, t.Person) {
			r.warn("api", "token %s: %s", t.ID, unmappedText(cfg, t.Person))
		}
	}
	r.ok("api", "%d API token(s) in use, on %s", active, cfg.Server.Listen)
	return active
}

// schemaFix is the advice for a store changed outside opsgate.
func schemaFix(loc memory.Location) string {
	return "find out who changed " + loc.Where() + " and restore it from a backup; opsgate does not recreate " +
		"what is missing, as the audit log may have been edited meanwhile"
}

// checkRest checks the chat adapters' configuration and reports what is
// configured but not yet part of this build.
func (e *env) checkRest(r *report, cfg *config.Config, apiTokens int) {
	set, err := buildChats(cfg, e.log, nil)
	if err != nil {
		r.fail("adapter", "correct that adapter's section of the configuration", "%v", err)
		set = chats.NewSet() // none: schedules on a platform are not enabled
		set.Route(chats.LogChat(e.log))
	}
	for _, name := range set.Names() {
		r.ok("adapter", "%s configured (its token is checked when opsgate serve connects)", name)
	}
	// Nothing to serve is a warning, not a failure: it is the normal state
	// of someone who only uses opsgate chat, and serve itself refuses it.
	// A chat section whose token is empty has already failed above.
	if what, fix, empty := nothingToServe(cfg, apiTokens); empty {
		r.warn("serve", "%s: opsgate chat works, opsgate serve refuses to start; %s", what, fix)
	}
	if len(cfg.Schedules) > 0 {
		if scheds, err := buildSchedules(cfg, set); err != nil {
			r.fail("sched", "enable the target's platform or change the schedule's target", "%v", err)
		} else {
			for _, s := range scheds {
				r.ok("sched", "%s → %s, next %s", s.Name, s.Target, s.Spec.Next(time.Now()).Format(time.RFC3339))
			}
		}
	}
	checkPolicy(r, cfg)
}

// checkPolicy validates the policy file and warns about asks nobody can
// answer on the platforms that are enabled.
func checkPolicy(r *report, cfg *config.Config) {
	pol, err := policy.Load(cfg.Policy.File, policyOptions(cfg))
	if err != nil {
		r.fail("policy", "correct the file; opsgate policy check prints the same message", "%v", err)
		return
	}
	if cfg.Policy.File == "" {
		r.ok("policy", "no policy file: the requester or the platform's approvers decide; reads run, everything else asks")
	} else {
		people, roles, rules := pol.Counts()
		r.ok("policy", "%s: %d people, %d roles, %d rules", cfg.Policy.File, people, roles, rules)
	}
	platforms := cfg.Adapters()
	if len(platforms) == 0 {
		platforms = []string{"terminal"}
	}
	for _, ask := range pol.Unreachable(platforms) {
		r.warn("policy", "%s: no approver has an identity on %s, so its requests can only expire (add people's identities, or enable their platform)",
			ask, strings.Join(platforms, ", "))
	}
}
