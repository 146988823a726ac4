package playground

import (
	"go/format"
	"net/http"
	"strings"
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
	var req formatRequest
	if aerr := (jsonBody{route: "POST /api/custom/format", max: maxCustomBody, fields: `source (Go source, a string)`, field: "source"}).decode(w, r, &req); aerr != nil {
		writeError(w, aerr.status, *aerr)
		return
	}
	out, err := format.Source([]byte(req.Source))
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, apiError{Error: "gofmt: " + strings.TrimSpace(err.Error()), Field: "source"})
		return
	}
	writeJSON(w, http.StatusOK, formatAnswer{Source: string(out)})
}
