package main

import (
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
	"github.com/opsgate/opsgate/policy/redact"
)

// newRedactor is the one redactor of everything opsgate shows people or
// writes to logs (docs/design.md §11): the built-in detectors, the policy file's
// redact.patterns, and every secret opsgate was configured with.
func newRedactor(cfg *config.Config) (*redact.Redactor, error) {
	pol, err := policy.Load(cfg.Policy.File, policyOptions(cfg))
	if err != nil {
		return nil, err
	}
	return redactorFor(cfg, pol)
}

// redactorFor is newRedactor with the policy already loaded.
func redactorFor(cfg *config.Config, pol *policy.Policy) (*redact.Redactor, error) {
	var patterns []string
	for _, re := range pol.Redact().Patterns {
		patterns = append(patterns, re.String())
	}
	return redact.New(redact.Options{Patterns: patterns, Secrets: cfg.Secrets()})
}
