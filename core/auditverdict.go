package core

import (
	"context"
	"fmt"
)

// ChainVerdict is what the audit hash chain says about a store's audit
// log: the one check behind opsgate audit verify and doctor.
type ChainVerdict struct {
	Verified int // entries whose hash verified
	Legacy   int // older entries, written before the chain existed
	Break    *ChainBreak
}

// String is the verdict in a sentence, as audit verify and doctor print it.
func (v ChainVerdict) String() string {
	if v.Break != nil {
		return fmt.Sprintf("entry %d: %s (%d entries before it verified)", v.Break.ID, v.Break.Why, v.Verified)
	}
	msg := fmt.Sprintf("%d audit entries verified", v.Verified)
	if v.Legacy > 0 {
		msg += fmt.Sprintf(" (%d older entries were written before the chain existed)", v.Legacy)
	}
	return msg
}

// VerifyAudit walks the whole audit log's hash chain ([VerifyChain]).
func VerifyAudit(ctx context.Context, log AuditLog) (ChainVerdict, error) {
	entries, err := log.Audit(ctx, AuditFilter{})
	if err != nil {
		return ChainVerdict{}, err
	}
	n, brk := VerifyChain(entries)
	v := ChainVerdict{Verified: n, Break: brk}
	if brk == nil {
		v.Legacy = len(entries) - n
	}
	return v, nil
}
