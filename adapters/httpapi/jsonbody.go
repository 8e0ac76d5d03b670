package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// decode reads the JSON body into v, answering a bad body itself (false).
// A body with a key twice in one object, at any depth, is bad_json:
// encoding/json keeps the last, another parser the first, so which one
// counted would be a guess (docs/design.md §16).
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = duplicateKey(body)
	}
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		err = dec.Decode(v)
		if err == nil {
			// More is false before a stray "}" or "]": only the end will do.
			if _, terr := dec.Token(); terr != io.EOF {
				err = errors.New("more than one JSON value in the body")
			}
		}
	}
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", "the request body is over 1 MiB")
	case isUnknownField(err):
		writeError(w, http.StatusBadRequest, "unknown_field", err.Error())
	default:
		writeError(w, http.StatusBadRequest, "bad_json", "the body is not the JSON expected: "+err.Error())
	}
	return false
}

// isUnknownField reports DisallowUnknownFields' error, which has no type
// of its own.
func isUnknownField(err error) bool {
	const prefix = "json: unknown field "
	return len(err.Error()) > len(prefix) && err.Error()[:len(prefix)] == prefix
}

// duplicateKey returns an error naming the first key that appears twice in
// one object of body, compared after unescaping ("a" and "\u0061" are the
// same key). Malformed JSON is left to the decoder to report, so it
// returns nil then.
func duplicateKey(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	// One frame per open object (its keys so far) or array (nil).
	type frame struct {
		keys      map[string]bool
		expectKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // io.EOF, or malformed: the decoder says which
		}
		var top *frame
		if n := len(stack); n > 0 {
			top = stack[n-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				if top != nil && top.keys != nil {
					top.expectKey = true // the object is this key's value
				}
				stack = append(stack, &frame{keys: map[string]bool{}, expectKey: true})
			case '[':
				if top != nil && top.keys != nil {
					top.expectKey = true
				}
				stack = append(stack, &frame{})
			default: // '}' or ']'
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top == nil || top.keys == nil {
			continue // a value in an array, or the whole body
		}
		if !top.expectKey {
			top.expectKey = true // a scalar value; a key comes next
			continue
		}
		key, _ := tok.(string)
		if top.keys[key] {
			return fmt.Errorf("the key %s appears twice in one object", strconv.Quote(key))
		}
		top.keys[key] = true
		top.expectKey = false
	}
}
