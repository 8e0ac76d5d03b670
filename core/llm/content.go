package llm

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/opsgate/opsgate/core"
)

// ErrNotOpenAIAPI is wrapped by the *core.ModelError of an answer that is
// not the OpenAI API at all (an HTML page, plain text): llm.base_url, or a
// proxy in front of it, points somewhere else.
var ErrNotOpenAIAPI = errors.New("the endpoint does not speak the OpenAI API")

// notAPIError is a successful HTTP answer in a format the API never uses.
type notAPIError struct {
	status      int
	contentType string
	detail      string // an HTML page's title, or the text's first line
	html        bool
	// whole: a streamed request was answered with one JSON document.
	whole bool
}

func (e *notAPIError) Error() string { return e.message() }

func (e *notAPIError) Unwrap() error { return ErrNotOpenAIAPI }

func (e *notAPIError) message() string {
	if e.whole {
		return "the endpoint answered with one whole JSON document (" + cmp.Or(e.contentType, "no content type") +
			"), not an event stream: it ignored stream: true; check llm.base_url, and that any proxy in between passes server-sent events through"
	}
	if e.html {
		return notAPIMessage(e.status, "an HTML page", e.contentType, e.detail)
	}
	return notAPIMessage(e.status, cmp.Or(e.contentType, "a body without a content type"), "", e.detail)
}

// notAPIMessage says that the endpoint answered status with what, not the
// API, and what to check.
func notAPIMessage(status int, what, contentType, detail string) string {
	var about []string
	if contentType != "" {
		about = append(about, contentType)
	}
	if detail != "" {
		about = append(about, fmt.Sprintf("%q", detail))
	}
	if len(about) > 0 {
		what += " (" + strings.Join(about, ", ") + ")"
	}
	advice := "check llm.base_url and any proxy in between"
	if status >= 500 {
		// A proxy's error page: it is up, what is behind it is not.
		advice = "a proxy in between could not get an answer from the model server behind it; check that server, and llm.base_url"
	}
	return "the endpoint answered with " + what + ", not the OpenAI API: " + advice
}

// checkContent lets a successful answer through when it can be the API's:
// an event stream for a streamed call, JSON otherwise, or anything that
// starts like one. It looks at the body only when the content type is not
// the expected one, and then reads only what has already arrived, so a
// stream that starts slowly is not held up.
func checkContent(res *http.Response, streamed bool) (*http.Response, error) {
	ct := res.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if (streamed && mt == "text/event-stream") || (!streamed && isJSONType(mt)) {
		return res, nil
	}
	buf := make([]byte, 512)
	n, err := res.Body.Read(buf)
	head := buf[:n]
	if n == 0 && err != nil {
		// Nothing to judge: the stream or decoder reports what happened.
		return res, nil
	}
	res.Body = readCloser{io.MultiReader(bytes.NewReader(head), res.Body), res.Body}
	trimmed := bytes.TrimSpace(head)
	page := isHTML(mt, trimmed)
	if streamed && !page && !looksLikeSSE(trimmed) && looksLikeJSON(trimmed) {
		// A 200 with JSON to a streamed request is never a stream: the
		// stream decoder would only say it ended without an answer.
		res.Body.Close()
		return nil, &notAPIError{status: res.StatusCode, contentType: mt, whole: true}
	}
	if !page && (looksLikeSSE(trimmed) || looksLikeJSON(trimmed)) {
		return res, nil
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	e := &notAPIError{status: res.StatusCode, contentType: mt, html: page}
	if page {
		e.detail = htmlTitle(body)
	} else {
		first, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
		e.detail = core.Truncate(strings.TrimSpace(first), 120, core.Bytes)
	}
	return nil, e
}

func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// looksLikeSSE: a server-sent event starts with a field name or a comment.
func looksLikeSSE(b []byte) bool {
	for _, p := range []string{"data:", "event:", "id:", "retry:", ":"} {
		if bytes.HasPrefix(b, []byte(p)) {
			return true
		}
	}
	return false
}

func looksLikeJSON(b []byte) bool {
	return bytes.HasPrefix(b, []byte("{")) || bytes.HasPrefix(b, []byte("["))
}

// htmlREs are compiled on the first HTML error page, not at every start.
var htmlREs = sync.OnceValue(func() (r struct{ title, h1, tag *regexp.Regexp }) {
	r.title = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)
	r.h1 = regexp.MustCompile(`(?is)<h1[^>]*>(.*?)</h1>`)
	r.tag = regexp.MustCompile(`<[^>]*>`)
	return r
})

// htmlTitle is what names an HTML page: its title, else its first heading.
func htmlTitle(page []byte) string {
	res := htmlREs()
	for _, re := range []*regexp.Regexp{res.title, res.h1} {
		if m := re.FindSubmatch(page); m != nil {
			t := html.UnescapeString(res.tag.ReplaceAllString(string(m[1]), ""))
			if t = strings.Join(strings.Fields(t), " "); t != "" {
				return core.Truncate(t, 80, core.Bytes)
			}
		}
	}
	return ""
}

// isHTML tells an HTML page from an API answer by its media type or its
// first bytes (proxies do not always label their pages).
func isHTML(mediaType string, body []byte) bool {
	return mediaType == "text/html" || mediaType == "application/xhtml+xml" || bytes.HasPrefix(bytes.TrimSpace(body), []byte("<"))
}

type readCloser struct {
	io.Reader
	io.Closer
}
