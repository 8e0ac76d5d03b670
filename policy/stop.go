package policy

// MayStop is the one rule, whatever the chat platform, for who may press
// the Stop button on a run's draft: whoever may talk to opsgate where the
// run is, and the approvers the adapter knows (a run that waits on them,
// or goes wrong in front of them, is theirs to halt) even where they may
// not start one. A policy file does not change it: stopping only ends
// work, it never lets a tool run.
func MayStop(mayTalk, approver bool) bool { return mayTalk || approver }
