package ndjson

import (
	"net/http/httptest"
	"testing"
)

func TestStream(t *testing.T) {
	rec := httptest.NewRecorder()
	s := Start(rec)
	if err := s.Send(map[string]string{"type": "a<b>"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(struct {
		N int `json:"n"`
	}{2}); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(func() {}); err == nil {
		t.Error("a value JSON cannot encode: no error")
	}
	if got, want := rec.Body.String(), "{\"type\":\"a<b>\"}\n{\"n\":2}\n"; got != want {
		t.Errorf("body %q, want %q", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != ContentType || !rec.Flushed {
		t.Errorf("Content-Type %q, flushed %v", ct, rec.Flushed)
	}
}
