package playground

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// jsonBody is what a POST route of the API takes: one JSON object of at most max bytes.
// Every route reads its body through decode, so that each answers a bad body the same way.
type jsonBody struct {
	route  string // "POST /api/run", for the Content-Type error
	max    int64  // bytes
	fields string // the object's fields, as the errors list them
	// typeOf, when set, says what a field must be, for a JSON value of the wrong type
	// ("runs must be an integer, not a JSON string").
	typeOf func(field string) string
	// tooLarge, when set, is what the 413 says after the limit.
	tooLarge string
	// field, when set, is the field a body error points at when no other is named.
	field string
}

// decode reads r's body into v. The error says what was wrong and carries the status
// that answers it: 415 for a body that is not JSON, 408 for one that did not arrive in
// time, 413 past the limit, 400 for anything else: an unknown field or a value of the
// wrong type, naming the field, and anything after the object.
func (b jsonBody) decode(w http.ResponseWriter, r *http.Request, v any) *apiError {
	if err := httpguard.RequireJSON(r); err != nil {
		return &apiError{Error: b.route + ": " + err.Error(), status: http.StatusUnsupportedMediaType}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, b.max))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		// Whatever follows the object, a second value or a stray byte, is refused.
		if _, terr := dec.Token(); terr != io.EOF {
			err = terr
			if !isBodyReadError(terr) {
				err = errors.New("more than one JSON value: send one object")
			}
		}
	}
	if err == nil {
		return nil
	}
	if slow, ok := errors.AsType[*httpguard.BodyTimeoutError](err); ok {
		return &apiError{Error: slow.Error(), status: slow.StatusCode()}
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &apiError{Error: fmt.Sprintf("the request body is larger than %d bytes%s", b.max, b.tooLarge), Field: b.field, status: http.StatusRequestEntityTooLarge}
	}
	if typeErr, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && b.typeOf != nil && typeErr.Field != "" {
		field := typeErr.Field
		return &apiError{Error: fmt.Sprintf("%s must be %s, not a JSON %s: the fields are %s", field, b.typeOf(field), typeErr.Value, b.fields), Field: field, status: http.StatusBadRequest}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return &apiError{Error: fmt.Sprintf("unknown field %q: the fields are %s", name, b.fields), Field: name, status: http.StatusBadRequest}
	}
	return &apiError{Error: "the body must be one JSON object with " + b.fields + ": " + strings.TrimPrefix(err.Error(), "json: "), Field: b.field, status: http.StatusBadRequest}
}

// isBodyReadError reports whether err is the body's own failure (too large, too slow)
// rather than what the JSON says.
func isBodyReadError(err error) bool {
	_, tooLarge := errors.AsType[*http.MaxBytesError](err)
	_, slow := errors.AsType[*httpguard.BodyTimeoutError](err)
	return tooLarge || slow
}

// checkQuery refuses a query that names a parameter more than once (kernel=a&kernel=b:
// httpguard.RepeatedQuery), naming it, and a query that does not parse, rather than read
// without its broken pairs.
func checkQuery(r *http.Request) *apiError {
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
		return &apiError{Error: "the query does not parse: " + err.Error() + ": write it as name=value pairs joined by &, each escaped"}
	}
	if err, ok := httpguard.RepeatedQuery(r).(*httpguard.RepeatedParamError); ok {
		return &apiError{Error: err.Error(), Field: err.Param}
	}
	return nil
}
