package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/opsgate/opsgate/core"
)

// statusError is an HTTP error answer, captured before the library parses
// it: the library loses the status of bodies it cannot parse (Ollama's
// {"error":"…"}) and keeps no message for others (vLLM, proxies).
type statusError struct {
	status int
	header http.Header
	body   []byte
}

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.status, core.Truncate(string(e.body), 200, core.Bytes))
}

// answerMiddleware turns every HTTP error answer into a *statusError and
// every successful answer that cannot be the API's (a proxy's HTML page)
// into a *notAPIError, which the library would otherwise read as an empty
// stream or a JSON syntax error.
func answerMiddleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	switch {
	case err != nil:
		return res, err
	case res.StatusCode >= 400:
		defer res.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		return nil, &statusError{status: res.StatusCode, header: res.Header, body: body}
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return checkContent(res, strings.HasSuffix(req.URL.Path, "/chat/completions"))
	}
	return res, nil
}

// classify turns a failed call into a *core.ModelError. output says whether
// any text, reasoning or tool call was already streamed: a connection lost
// after that is not retried, since the user has seen half an answer.
func (c *Client) classify(err error, output bool) *core.ModelError {
	var me *core.ModelError
	if errors.As(err, &me) {
		return me
	}
	var se *statusError
	if errors.As(err, &se) {
		return c.fromStatus(se.status, se.header, se.body)
	}
	var ae *openai.Error // not expected behind the middleware; kept as a fallback
	if errors.As(err, &ae) {
		return c.fromStatus(ae.StatusCode, http.Header{}, []byte(ae.RawJSON()))
	}
	var na *notAPIError
	if errors.As(err, &na) {
		return &core.ModelError{Kind: core.ModelFatal, StatusCode: na.status, Message: na.message(), Err: err}
	}
	var stErr *ssestream.StreamError
	if errors.As(err, &stErr) {
		msg, _ := serverMessage(stErr.Event.Data)
		if msg == "" {
			msg = "unknown error"
		}
		return &core.ModelError{Kind: core.ModelFatal, Message: "the model server reported an error while streaming: " + msg, Err: err}
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return &core.ModelError{Kind: core.ModelFatal, Message: "the model server sent a stream chunk that is not valid JSON: " + err.Error(), Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &core.ModelError{Kind: core.ModelTransient, Message: "the model server did not answer in time", Err: err}
	}
	if fatal := fatalTransport(err); fatal != "" {
		return &core.ModelError{Kind: core.ModelFatal, Message: fatal, Err: err}
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		if output {
			return &core.ModelError{Kind: core.ModelFatal, Message: "the connection to the model server broke mid-answer: " + transportDetail(err), Err: err}
		}
		return &core.ModelError{Kind: core.ModelTransient, Message: "cannot reach the model server: " + transportDetail(err), Err: err}
	}
	return &core.ModelError{Kind: core.ModelFatal, Message: "model call failed: " + err.Error(), Err: err}
}

// transportDetail drops the *url.Error wrapper, whose method and URL the
// caller knows, keeping the cause ("dial tcp …: connection refused").
func transportDetail(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// fatalTransport names transport failures that retrying cannot fix.
func fatalTransport(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return fmt.Sprintf("cannot resolve the model server's host %q: check llm.base_url", dns.Name)
	}
	var cert *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	if errors.As(err, &cert) || errors.As(err, &unknownCA) || errors.As(err, &hostname) {
		return "the model server's TLS certificate is not trusted: " + err.Error()
	}
	var rec tls.RecordHeaderError
	if errors.As(err, &rec) {
		return "the model server does not speak TLS: use http:// in llm.base_url"
	}
	return ""
}

// fromStatus classifies an HTTP error answer and says what to check.
func (c *Client) fromStatus(status int, h http.Header, body []byte) *core.ModelError {
	msg, code := serverMessage(body)
	e := &core.ModelError{Kind: core.ModelFatal, StatusCode: status, RetryAfter: retryAfter(h, time.Now())}
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	switch {
	case isHTML(mt, body):
		e.Message = notAPIMessage(status, "an HTML page", mt, htmlTitle(body))
		e.Err = ErrNotOpenAIAPI
	case msg == "":
		e.Message = withAdvice(http.StatusText(status), c.statusAdvice(status, code, ""))
	default:
		e.Message = withAdvice(msg, c.statusAdvice(status, code, msg))
	}
	switch {
	case status == http.StatusTooManyRequests && code == "insufficient_quota":
		// Out of credit: waiting does not help.
	case status == http.StatusTooManyRequests:
		e.Kind = core.ModelRateLimited
	case status == http.StatusRequestTimeout, status == http.StatusConflict,
		status >= 500 && status != http.StatusNotImplemented && status != http.StatusHTTPVersionNotSupported:
		e.Kind = core.ModelTransient
	}
	return e
}

// serverMessage finds the message of an error body in the shapes servers
// use: {"error":{"message","code"}}, {"error":"…"}, {"message":"…"},
// {"detail":…}, or plain text. HTML pages give no message.
func serverMessage(body []byte) (msg, code string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		text := strings.TrimSpace(string(body))
		if strings.HasPrefix(text, "<") {
			return "", ""
		}
		return core.Truncate(text, 300, core.Bytes), ""
	}
	var obj struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
	}
	var s string
	switch {
	case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
		_ = json.Unmarshal(obj.Code, &code)
		return core.Truncate(obj.Message, 500, core.Bytes), code
	case json.Unmarshal(v.Error, &s) == nil && s != "":
		return core.Truncate(s, 500, core.Bytes), ""
	case v.Message != "":
		return core.Truncate(v.Message, 500, core.Bytes), ""
	case json.Unmarshal(v.Detail, &s) == nil && s != "":
		return core.Truncate(s, 500, core.Bytes), ""
	case len(v.Detail) > 0:
		return core.Truncate(string(v.Detail), 500, core.Bytes), ""
	}
	return "", ""
}

// retryAfter reads Retry-After-Ms (milliseconds, OpenAI) or Retry-After
// (seconds or an HTTP date); 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func fatalf(format string, args ...any) *core.ModelError {
	return &core.ModelError{Kind: core.ModelFatal, Message: fmt.Sprintf(format, args...)}
}
