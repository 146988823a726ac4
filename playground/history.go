package playground

import (
	"net/http"

	"github.com/wasmgap/wasmgap/internal/history"
)

// handleHistory answers the articles' historical figures, every one with its article,
// table, hardware and what the article printed.
func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, history.All())
}
