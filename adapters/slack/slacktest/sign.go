package slacktest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// Sign returns the X-Slack-Signature of body sent at ts with secret:
// "v0=" + hex(HMAC-SHA256(secret, "v0:<unix ts>:<body>")).
func Sign(secret string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + strconv.FormatInt(ts.Unix(), 10) + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// SignedRequest returns a POST of body to target signed as Slack signs
// requests at ts. contentType is "application/json" for events and
// "application/x-www-form-urlencoded" for commands and interactions.
func SignedRequest(t testing.TB, target, secret string, body []byte, contentType string, ts time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", Sign(secret, ts, body))
	return req
}

// InteractionForm is the form body Slack posts for an interaction payload.
func InteractionForm(payload []byte) []byte {
	return []byte(url.Values{"payload": {string(payload)}}.Encode())
}
