package agenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// sseWriter writes server-sent events, flushing each one: agents read the
// stream as it comes.
type sseWriter struct {
	w   http.ResponseWriter
	err error
}

// newSSE starts an event stream on w.
func newSSE(w http.ResponseWriter) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w}
}

// event writes one event: "event: NAME" (none when name is "") and data
// as one JSON line.
func (s *sseWriter) event(name string, data any) {
	if s.err != nil {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		s.err = err
		return
	}
	if name != "" {
		_, s.err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	} else {
		_, s.err = fmt.Fprintf(s.w, "data: %s\n\n", b)
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// raw writes a data line as is ("[DONE]" of OpenAI's chat streams).
func (s *sseWriter) raw(data string) {
	if s.err != nil {
		return
	}
	_, s.err = fmt.Fprintf(s.w, "data: %s\n\n", data)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// writeJSON answers with one JSON document.
func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}
