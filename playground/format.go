package playground

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"net/http"
	"strings"

	"github.com/wasmgap/wasmgap/internal/httpguard"
)

// formatRequest and formatAnswer are POST /api/custom/format's: a user kernel's source
// and the same source as gofmt prints it.
type formatRequest struct {
	Source string `json:"source"`
}

type formatAnswer struct {
	Source string `json:"source"`
}

// handleFormat formats a user kernel's source as gofmt does (go/format), or says where it
// does not parse (422). It runs nothing and keeps nothing.
func (s *Server) handleFormat(w http.ResponseWriter, r *http.Request) {
	if err := httpguard.RequireJSON(r); err != nil {
		writeError(w, http.StatusUnsupportedMediaType, apiError{Error: "POST /api/custom/format: " + err.Error()})
		return
	}
	var req formatRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxCustomBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			writeError(w, http.StatusRequestEntityTooLarge, apiError{Error: fmt.Sprintf("the source is larger than %d bytes", maxCustomBody)})
			return
		}
		writeError(w, http.StatusBadRequest, apiError{Error: `the body must be one JSON object {"source": "<Go>"}: ` + err.Error()})
		return
	}
	out, err := format.Source([]byte(req.Source))
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, apiError{Error: "gofmt: " + strings.TrimSpace(err.Error()), Field: "source"})
		return
	}
	writeJSON(w, http.StatusOK, formatAnswer{Source: string(out)})
}
