package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

type dsn string

func (d dsn) String() string { return string(d) }

// Issue 10: log lines are redacted: the message, string attributes, groups
// (also those added with With and WithGroup), errors and Stringers; other
// values keep their type.
func TestHandlerRedactsLogLines(t *testing.T) {
	r := mustNew(t, Options{Secrets: []string{"7412589630:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"}})
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil), r))

	log.With("bot", "7412589630:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw").WithGroup("req").Info(
		"calling upstream with Authorization: Bearer 0a1b2c3d4e5f60718293a4b5c6d7e8f9",
		"attempt", 3,
		"err", errors.New("dial postgres://app:S3cr3tPassw0rd!@db:5432/app: connection refused"),
		"dsn", dsn("mysql://root:An0therS3cret@mysql:3306/"),
		slog.Group("headers", "x-api-key", "x-api-key: k-0123456789abcdef", "accept", "*/*"),
	)

	line := buf.String()
	for _, secret := range []string{"AAHdqTcvCH1vGWJx", "0a1b2c3d4e5f6071", "S3cr3tPassw0rd", "An0therS3cret", "k-0123456789abcdef"} {
		if strings.Contains(line, secret) {
			t.Errorf("log line shows %q: %s", secret, line)
		}
	}
	var rec struct {
		Msg string `json:"msg"`
		Bot string `json:"bot"`
		Req struct {
			Attempt any    `json:"attempt"`
			Err     string `json:"err"`
			DSN     string `json:"dsn"`
			Headers struct {
				Key    string `json:"x-api-key"`
				Accept string `json:"accept"`
			} `json:"headers"`
		} `json:"req"`
	}
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	for _, c := range []struct{ got, want string }{
		{rec.Msg, "calling upstream with Authorization: Bearer [REDACTED:authorization]"},
		{rec.Bot, "[REDACTED:configured]"},
		{rec.Req.Err, "dial postgres://app:[REDACTED:url_password]@db:5432/app: connection refused"},
		{rec.Req.DSN, "mysql://root:[REDACTED:url_password]@mysql:3306/"},
		{rec.Req.Headers.Key, "x-api-key: [REDACTED:password_assignment]"},
		{rec.Req.Headers.Accept, "*/*"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q (line %s)", c.got, c.want, line)
		}
	}
	if n, ok := rec.Req.Attempt.(float64); !ok || n != 3 {
		t.Errorf("attempt = %#v, want the number 3", rec.Req.Attempt)
	}
}
