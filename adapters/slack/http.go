package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// HTTP mode routes, relative to the server root. Point the Slack app's
// Event Subscriptions, Interactivity and slash command Request URLs at
// them.
const (
	PathEvents      = "/slack/events"
	PathInteractive = "/slack/interactive"
	PathCommands    = "/slack/commands"
)

const maxBody = 1 << 20

// Handler serves HTTP mode: Events API (url_verification included),
// interactivity and slash commands on PathEvents, PathInteractive and
// PathCommands; mount it on "/slack/". A request without a valid
// signature made with the signing secret, or with a timestamp more than
// five minutes off, gets 401 and does nothing. Every valid request is
// answered at once; its work, handed to e, happens afterwards.
func (a *Adapter) Handler(e Engine) http.Handler {
	a.bind(e)
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathEvents, a.serveEvents)
	mux.HandleFunc("POST "+PathInteractive, a.serveInteractive)
	mux.HandleFunc("POST "+PathCommands, a.serveCommands)
	return a.verified(mux)
}

// verified lets through only requests signed by Slack, with their body
// readable again by the handler.
func (a *Adapter) verified(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "request body too large or unreadable", http.StatusRequestEntityTooLarge)
			return
		}
		if err := a.verify(r.Header, body); err != nil {
			a.log.Warn("rejected an unsigned or stale request", "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
			http.Error(w, "invalid request signature", http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

func (a *Adapter) verify(h http.Header, body []byte) error {
	if a.cfg.SigningSecret == "" {
		return errors.New("slack: signing_secret is not set: HTTP mode is off")
	}
	sv, err := slack.NewSecretsVerifier(h, a.cfg.SigningSecret)
	if err != nil {
		return err
	}
	if _, err := sv.Write(body); err != nil {
		return err
	}
	return sv.Ensure()
}

func (a *Adapter) serveEvents(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var outer struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
		EventID   string `json:"event_id"`
	}
	if err := json.Unmarshal(body, &outer); err != nil {
		http.Error(w, "invalid JSON", http.StatusBadRequest)
		return
	}
	switch outer.Type {
	case slackevents.URLVerification:
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, outer.Challenge)
		return
	case slackevents.CallbackEvent:
	default:
		w.WriteHeader(http.StatusOK)
		return
	}
	if !a.seen.first("event", outer.EventID) {
		a.log.Info("redelivered event ignored", "event_id", outer.EventID,
			"retry", r.Header.Get("X-Slack-Retry-Num"), "reason", r.Header.Get("X-Slack-Retry-Reason"))
		w.WriteHeader(http.StatusOK)
		return
	}
	ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
	w.WriteHeader(http.StatusOK)
	if err != nil {
		a.log.Debug("unsupported event acknowledged", "err", err)
		return
	}
	a.spawn("event", func(ctx context.Context) { a.onEvent(ctx, ev) })
}

func (a *Adapter) serveInteractive(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "invalid form", http.StatusBadRequest)
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(r.PostForm.Get("payload")), &cb); err != nil {
		http.Error(w, "invalid payload", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
	a.spawn("interaction", func(ctx context.Context) { a.onInteraction(ctx, cb) })
}

func (a *Adapter) serveCommands(w http.ResponseWriter, r *http.Request) {
	cmd, err := slack.SlashCommandParse(r)
	if err != nil {
		http.Error(w, "invalid form", http.StatusBadRequest)
		return
	}
	reply, work := a.command(cmd)
	if work != nil {
		a.spawn("command", work)
	}
	if reply == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}
