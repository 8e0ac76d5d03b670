package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/opsgate/opsgate/adapters/render"
)

// handleTimeout bounds the handling of one update. It does not end with
// the polling context: an update being stored when shutdown begins is
// either stored or refused, never half done.
const handleTimeout = 15 * time.Second

// poll long-polls getUpdates until ctx ends. The offset moves past an
// update only once it was handled: a message the engine did not store (a
// store failure, a shutdown) stops the batch, and getUpdates returns it
// again.
func (a *Adapter) poll(ctx context.Context) error {
	offset := 0
	backoff := time.Second
	failing := false
	for ctx.Err() == nil {
		// After a failure the first poll does not wait for updates, so
		// that Health sees at once that Telegram answers again.
		timeout := max(1, int(a.cfg.PollTimeout/time.Second))
		if failing {
			timeout = 0
		}
		ups, err := a.bot(ctx).GetUpdates(tgbotapi.UpdateConfig{
			Offset: offset, Timeout: timeout,
			AllowedUpdates: []string{"message", "callback_query"},
		})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			err = a.classify("get updates", err)
			a.link.Down(err)
			failing = true
			wait := backoff
			var re *render.Error
			if errors.As(err, &re) && re.Kind == render.KindRateLimited {
				wait = re.RetryAfter
			}
			a.log.Warn("telegram: get updates failed; retrying", "in", wait, "err", err)
			sleep(ctx, wait)
			backoff = min(2*backoff, 30*time.Second)
			continue
		}
		backoff = time.Second
		failing = false
		a.link.Up()
		for _, u := range ups {
			if u.UpdateID < offset {
				continue
			}
			if ctx.Err() != nil {
				break
			}
			if err := a.handleUpdate(ctx, u); err != nil {
				a.log.Warn("telegram: update not handled; it will be fetched again", "update_id", u.UpdateID, "err", err)
				sleep(ctx, time.Second)
				break
			}
			offset = u.UpdateID + 1
		}
	}
	a.confirm(offset)
	return nil
}

// confirm tells Telegram which updates were handled, so a restart does not
// fetch them again (the engine would drop them as duplicates anyway).
func (a *Adapter) confirm(offset int) {
	if offset == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := a.bot(ctx).GetUpdates(tgbotapi.UpdateConfig{Offset: offset, Limit: 1}); err != nil {
		a.log.Debug("telegram: confirm handled updates", "err", a.classify("get updates", err))
	}
}

// handleUpdate handles one update once. An error means it was not handed
// over and must be delivered again.
func (a *Adapter) handleUpdate(ctx context.Context, u tgbotapi.Update) error {
	if !a.seen.add(u.UpdateID) {
		a.log.Debug("telegram: duplicate update ignored", "update_id", u.UpdateID)
		return nil
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handleTimeout)
	defer cancel()
	var err error
	switch {
	case u.Message != nil:
		err = a.onMessage(hctx, u.Message)
	case u.CallbackQuery != nil:
		a.onCallback(hctx, u.CallbackQuery)
	}
	if err != nil {
		a.seen.remove(u.UpdateID)
	}
	return err
}

// WebhookHandler receives updates when a webhook URL is configured and
// hands them to e. It answers 401 to a request without the right secret
// token, and 503 when an update could not be handed over, so that Telegram
// delivers it again.
func (a *Adapter) WebhookHandler(e Engine) http.Handler {
	a.bind(e)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		got := r.Header.Get("X-Telegram-Bot-Api-Secret-Token")
		if a.cfg.WebhookSecret == "" || subtle.ConstantTimeCompare([]byte(got), []byte(a.cfg.WebhookSecret)) != 1 {
			a.log.Warn("telegram: webhook request with a wrong secret token", "remote", r.RemoteAddr)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		var u tgbotapi.Update
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&u); err != nil {
			http.Error(w, "bad update", http.StatusBadRequest)
			return
		}
		if err := a.handleUpdate(r.Context(), u); err != nil {
			a.log.Warn("telegram: webhook update not handled; Telegram will retry", "update_id", u.UpdateID, "err", err)
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

// recent is a bounded set of the latest update ids, to process an update
// delivered twice (a webhook retry, a poll after a crash) once.
type recent struct {
	mu    sync.Mutex
	max   int
	ids   map[int]struct{}
	order []int
}

func newRecent(max int) *recent { return &recent{max: max, ids: map[int]struct{}{}} }

// add reports whether id is new, and remembers it.
func (r *recent) add(id int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.ids[id]; ok {
		return false
	}
	r.ids[id] = struct{}{}
	r.order = append(r.order, id)
	if len(r.order) > r.max {
		delete(r.ids, r.order[0])
		r.order = r.order[1:]
	}
	return true
}

func (r *recent) remove(id int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.ids, id)
}
