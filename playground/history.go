package playground

import "net/http"

func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotImplemented, apiError{Error: "the articles' historical figures are not available in this build"})
}
