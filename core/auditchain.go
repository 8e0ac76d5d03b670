package core

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
)

// ChainHash is the hash of e in the audit hash chain (docs/design.md §11): the hex
// SHA-256 of e's content and prev, the hash of the entry before it. Every
// store computes it with this one function when it appends, so a chain
// written by one store verifies with any.
//
// The content is every field but ID, Hash and PrevHash (RiskSource only
// when set), each written as its length (8 bytes, big endian) and its
// bytes, so that no two different entries encode alike: Time as unix microseconds (what stores keep),
// Duration in nanoseconds. The store's ID is left out because it is known
// only after the insert; order is bound by prev instead.
func (e AuditEntry) ChainHash(prev string) string {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field("opsgate-audit-v1")
	field(prev)
	field(fmt.Sprint(e.Time.UnixMicro()))
	for _, s := range []string{e.Kind, e.ConvKey, e.RunID, e.ApprovalID, e.Actor.ID, e.Actor.Name,
		e.Toolset, e.Tool, e.ActionHash, string(e.Risk), fmt.Sprint(int64(e.Duration)), e.Detail} {
		field(s)
	}
	// Fields added later are hashed only when set, after the others, so
	// an entry without them hashes as it always did and old chains verify.
	if e.RiskSource != "" {
		field("risk_source")
		field(string(e.RiskSource))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// StoredRisk is how a store keeps Risk and RiskSource in one column:
// "read" alone, or "read/configured". Audit logs written before sources
// were recorded hold the risk alone, so they read back unchanged, and no
// migration was needed for the addition.
func (e AuditEntry) StoredRisk() string {
	if e.RiskSource == "" {
		return string(e.Risk)
	}
	return string(e.Risk) + "/" + string(e.RiskSource)
}

// SetStoredRisk sets Risk and RiskSource from a value of StoredRisk.
func (e *AuditEntry) SetStoredRisk(s string) {
	risk, source, _ := strings.Cut(s, "/")
	e.Risk, e.RiskSource = Risk(risk), RiskSource(source)
}

// ChainBreak is where an audit chain does not hold.
type ChainBreak struct {
	ID  int64  // the first entry that does not verify
	Why string // what is wrong, in a sentence
}

// VerifyChain checks the chain of the whole audit log, oldest first. Entries
// without a hash may only come before the first hashed one (they were
// written before the chain existed); from there on each entry must carry
// the hash of the one before it and its own hash must match its content.
// It returns the number of hashed entries verified and the first break.
func VerifyChain(entries []AuditEntry) (verified int, brk *ChainBreak) {
	prev, started := "", false
	var lastID int64
	for _, e := range entries {
		if lastID != 0 && e.ID <= lastID {
			return verified, &ChainBreak{e.ID, fmt.Sprintf("entry %d comes after entry %d: entries were reordered", e.ID, lastID)}
		}
		lastID = e.ID
		if e.Hash == "" {
			if started {
				return verified, &ChainBreak{e.ID, "entry has no hash inside the chain: it was added or changed outside opsgate"}
			}
			continue
		}
		if started && e.PrevHash != prev {
			return verified, &ChainBreak{e.ID, "entry does not follow the one before it: an entry before it was deleted, reordered or changed"}
		}
		if !started && e.PrevHash != "" {
			return verified, &ChainBreak{e.ID, "the chain's first entry names a predecessor: entries before it were deleted"}
		}
		if e.ChainHash(e.PrevHash) != e.Hash {
			return verified, &ChainBreak{e.ID, "entry content does not match its hash: it was edited"}
		}
		prev, started = e.Hash, true
		verified++
	}
	return verified, nil
}
