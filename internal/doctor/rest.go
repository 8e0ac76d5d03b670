package doctor

import (
	"strings"
	"time"

	"github.com/opsgate/opsgate/adapters/chats"
	"github.com/opsgate/opsgate/internal/config"
	"github.com/opsgate/opsgate/policy"
)

// checkRest checks the chat adapters' configuration and reports what is
// configured but not yet part of this build.
func (d *Doctor) checkRest(r *report, cfg *config.Config, apiTokens int) {
	set, err := d.Chats()
	if err != nil {
		r.fail("adapter", "correct that adapter's section of the configuration", "%v", err)
		set = chats.NewSet() // none: schedules on a platform are not enabled
		set.Route(chats.LogChat(d.Log))
	}
	for _, name := range set.Names() {
		r.ok("adapter", "%s configured (its token is checked when opsgate serve connects)", name)
	}
	// Nothing to serve is a warning, not a failure: it is the normal state
	// of someone who only uses opsgate chat, and serve itself refuses it.
	// A chat section whose token is empty has already failed above.
	if what, fix, empty := d.NothingToServe(apiTokens); empty {
		r.warn("serve", "%s: opsgate chat works, opsgate serve refuses to start; %s", what, fix)
	}
	if len(cfg.Schedules) > 0 {
		if scheds, err := d.Schedules(set); err != nil {
			r.fail("sched", "enable the target's platform or change the schedule's target", "%v", err)
		} else {
			for _, s := range scheds {
				r.ok("sched", "%s → %s, next %s", s.Name, s.Target, s.Spec.Next(time.Now()).Format(time.RFC3339))
			}
		}
	}
	d.checkPolicy(r, cfg)
}

// checkPolicy validates the policy file and warns about asks nobody can
// answer on the platforms that are enabled.
func (d *Doctor) checkPolicy(r *report, cfg *config.Config) {
	pol, err := policy.Load(cfg.Policy.File, d.PolicyOptions)
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
