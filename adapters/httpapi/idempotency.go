package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/opsgate/opsgate/core"
)

// Idempotency-Key on POST …/messages (docs/design.md §16): the first request with
// a key claims it in the store, naming the run that will answer it
// (core.Inbound.RunID) before anything runs; a repeat with the same body
// finds the claim and follows that run instead of sending the message
// again, on whichever replica it arrives, also while the first request
// is still streaming. Of two identical requests at once, the store lets
// one claim win; the other follows the winner's run.

// IdempotencyHeader is the request header that names a message's key.
const IdempotencyHeader = "Idempotency-Key"

// RunIDHeader carries, on a message's stream, the run that answers it.
const RunIDHeader = "Opsgate-Run-Id"

// IdempotencyTTL is how long a key is remembered.
const IdempotencyTTL = 24 * time.Hour

// maxIdempotencyKey is the longest key accepted.
const maxIdempotencyKey = 200

// idempotencyKeyOf reads the request's Idempotency-Key: "" when there is
// none; 1 to 200 printable ASCII characters, else 400
// invalid_idempotency_key (answered here, false).
func idempotencyKeyOf(w http.ResponseWriter, r *http.Request) (string, bool) {
	vs, sent := r.Header[http.CanonicalHeaderKey(IdempotencyHeader)]
	if !sent {
		return "", true
	}
	valid := len(vs) == 1 && len(vs[0]) >= 1 && len(vs[0]) <= maxIdempotencyKey
	for i := 0; valid && i < len(vs[0]); i++ {
		valid = vs[0][i] >= 0x20 && vs[0][i] <= 0x7e
	}
	if !valid {
		writeError(w, http.StatusBadRequest, "invalid_idempotency_key", "Idempotency-Key must be sent once, 1 to 200 printable ASCII characters")
		return "", false
	}
	return vs[0], true
}

// claim claims key for the message in: when it is the first, it names the
// run that will answer in (in.RunID, and the RunIDHeader) and returns
// release, which frees the key if the message is then refused. Otherwise
// it answers the request itself (false): 422 idempotency_key_reused for
// another body, or the first request's run, replayed and followed to its
// completed.
func (a *API) claim(w http.ResponseWriter, r *http.Request, key string, req messageRequest, in *core.Inbound) (release func(), ok bool) {
	body, err := json.Marshal(req) // the body as read: its spacing and key order do not count
	if err != nil {
		a.fail(w, "message", err)
		return nil, false
	}
	hash := sha256.Sum256(body)
	now := time.Now().UTC()
	mine := core.IdempotencyKey{ConvKey: in.ConvKey, Key: key, BodyHash: hash[:], RunID: newRunID(), CreatedAt: now}
	held, claimed, err := a.awaitClaim(r.Context(), mine)
	if err != nil {
		a.fail(w, "idempotency key", err)
		return nil, false
	}
	if !claimed && !bytes.Equal(held.BodyHash, mine.BodyHash) {
		writeError(w, http.StatusUnprocessableEntity, "idempotency_key_reused",
			"this Idempotency-Key was used for another body in this conversation; use a new key for a new message")
		return nil, false
	}
	w.Header().Set(RunIDHeader, held.RunID)
	if !claimed {
		a.log.Info("api: a repeated message follows its first run", "conv", in.ConvKey, "run", held.RunID)
		a.stream(w, r, in.ConvKey, cursor{replay: true, runID: held.RunID, until: held.RunID}, false, nil)
		return nil, false
	}
	in.RunID = mine.RunID
	return func() {
		w.Header().Del(RunIDHeader)
		// The request may be over; the key must be freed all the same.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
		defer cancel()
		if err := a.o.Store.ReleaseIdempotencyKey(ctx, in.ConvKey, key, mine.RunID); err != nil {
			a.log.Error("api: releasing the idempotency key of a refused message", "conv", in.ConvKey, "err", err)
		}
	}, true
}

// claimPatience is how long a repeat waits for the run its key names to
// start before following it anyway, and claimPoll how often it looks.
const (
	claimPatience = 2 * time.Second
	claimPoll     = 50 * time.Millisecond
)

// awaitClaim claims mine's key. When another request holds it with a run
// that has not started, that request may yet be refused and release the
// key (two identical requests at once, the first over the rate limit): a
// follower of its run would then wait for ever. So for a little while,
// until the run shows up, it claims again, and runs the message itself if
// the key was released. A run that takes longer to start is queued behind
// another; following it is right.
func (a *API) awaitClaim(ctx context.Context, mine core.IdempotencyKey) (held core.IdempotencyKey, claimed bool, err error) {
	deadline := time.Now().Add(claimPatience)
	for {
		held, claimed, err = a.o.Store.ClaimIdempotencyKey(ctx, mine, mine.CreatedAt.Add(-IdempotencyTTL))
		if err != nil || claimed || !bytes.Equal(held.BodyHash, mine.BodyHash) || time.Now().After(deadline) {
			return held, claimed, err
		}
		if _, err := a.o.Store.Run(ctx, held.RunID); err == nil {
			return held, false, nil // it started: follow it
		}
		select {
		case <-ctx.Done():
			return held, false, ctx.Err()
		case <-time.After(claimPoll):
		}
	}
}

// newRunID makes a run id as core does: 128 random bits in hex.
func newRunID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
