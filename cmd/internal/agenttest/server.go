package agenttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// protocol is one wire API the server speaks: it maps HTTP requests to
// Requests and Turns to HTTP answers. Each lives in a file of its own
// (protocol_*.go); doc.go says how to add one.
type protocol interface {
	// name is the protocol's name, as Request.Protocol gives it.
	name() string
	// routes are the net/http ServeMux patterns it answers ("POST
	// /v1/messages").
	routes() []string
	// decode reads the request: its Kind, Model, Stream, System, Tools
	// and Messages. The server has set the rest.
	decode(hr *http.Request, req *Request) error
	// write answers req with turn (for KindTurn), or as its Kind asks.
	write(w http.ResponseWriter, req *Request, turn Turn) error
}

// protocols are the wire APIs every Server speaks.
func protocols() []protocol {
	return []protocol{anthropicMessages{}, openaiResponses{}, openaiChat{}, geminiAPI{}}
}

// maxBody bounds a request body: agents send their whole conversation, a
// few hundred KB in a test.
const maxBody = 64 << 20

// Server is a scripted model server on a loopback port. It speaks every
// protocol of protocols() at once, answers turn requests from its Script,
// and logs every request it receives.
type Server struct {
	t      testing.TB
	script Script
	srv    *http.Server
	ln     net.Listener

	mu       sync.Mutex
	requests []*Request
	turns    map[int]Turn // what was answered, by Request.Seq
	errs     []string     // what could not be answered
}

// NewServer starts a server answering from script (nil: set it later with
// SetScript) on 127.0.0.1 on a free port. It stops when the test ends; when the test failed, it logs a
// digest of every request it got, and with $LEDGER_AGENTTEST_LOG set to a
// folder, it writes each request's body there in full (NNN-kind.json).
func NewServer(t testing.TB, script Script) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("agenttest: listen: %v", err)
	}
	s := &Server{t: t, script: script, ln: ln, turns: map[int]Turn{}}
	mux := http.NewServeMux()
	for _, p := range protocols() {
		for _, route := range p.routes() {
			mux.HandleFunc(route, func(w http.ResponseWriter, hr *http.Request) { s.serve(p, w, hr) })
		}
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, hr *http.Request) {
		// Logged, so that a test sees what an agent asked that no protocol
		// here answers.
		s.serve(nil, w, hr)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	t.Cleanup(func() {
		s.srv.Close()
		if t.Failed() {
			t.Logf("agenttest: the model server got %d requests:\n%s", len(s.Requests()), s.Digest())
		}
		s.dump()
	})
	return s
}

// SetScript replaces the script the server answers from: a test that runs
// an agent several times may script each run apart. It is safe while the
// server is answering (a request in flight finishes with the old script).
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	s.script = script
	s.mu.Unlock()
}

// URL is the server's base URL, "http://127.0.0.1:PORT" (no slash at the
// end; Codex's base_url adds "/v1").
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// serve logs one request and answers it with p (nil: not found).
func (s *Server) serve(p protocol, w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	req := &Request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery, Header: hr.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	req.Seq = len(s.requests)
	s.mu.Unlock()
	if err != nil {
		s.fail(w, req, http.StatusBadRequest, fmt.Sprintf("read body: %v", err))
		return
	}
	if p == nil {
		s.fail(w, req, http.StatusNotFound, "no protocol here answers "+hr.Method+" "+hr.URL.Path)
		return
	}
	req.Protocol = p.name()
	if err := p.decode(hr, req); err != nil {
		s.fail(w, req, http.StatusBadRequest, fmt.Sprintf("%s: %v", p.name(), err))
		return
	}
	var turn Turn
	if req.Kind == KindTurn {
		// One request at a time: a script is a story told in order.
		s.mu.Lock()
		if s.script != nil {
			turn = s.script(req)
		} else {
			turn = Text("agenttest: no script")
		}
		turn.Usage = turn.Usage.orDefault()
		s.turns[req.Seq] = turn
		s.mu.Unlock()
	}
	if err := p.write(w, req, turn); err != nil {
		s.mu.Lock()
		s.errs = append(s.errs, fmt.Sprintf("request %d: %v", req.Seq, err))
		s.mu.Unlock()
	}
}

// fail answers with an error status, and remembers why.
func (s *Server) fail(w http.ResponseWriter, req *Request, code int, why string) {
	s.mu.Lock()
	s.errs = append(s.errs, fmt.Sprintf("request %d (%s %s): %s", req.Seq, req.Method, req.Path, why))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": "invalid_request_error", "message": why}})
}

// Requests is every request received so far, in order of arrival.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Turns is every turn request received so far (the ones the script
// answered), in order.
func (s *Server) Turns() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Kind == KindTurn {
			out = append(out, r)
		}
	}
	return out
}

// Answer is the turn the script gave request seq.
func (s *Server) Answer(seq int) (Turn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.turns[seq]
	return t, ok
}

// Errors lists the requests the server could not answer as asked (an
// unknown path, a body it could not decode, a write that failed).
func (s *Server) Errors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.errs...)
}

// Digest is one line per request: its number, kind, model, path, the
// tools offered, and the start of its last message.
func (s *Server) Digest() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		last := r.Last()
		text := last.Text
		if len(last.Results) > 0 {
			text = "[tool result] " + last.Results[0].Text
		}
		if len(text) > 120 {
			text = text[:120] + "…"
		}
		fmt.Fprintf(&b, "  %3d %-16s %-12s %s %s?%s tools=%d msgs=%d last=%s:%q",
			r.Seq, r.Protocol, r.Kind, r.Model, r.Path, r.Query, len(r.Tools), len(r.Messages), last.Role, text)
		if t, ok := s.Answer(r.Seq); ok {
			fmt.Fprintf(&b, " -> text=%q calls=%d input=%d", short(t.Text, 40), len(t.Calls), t.Usage.Context())
		}
		b.WriteByte('\n')
	}
	for _, e := range s.Errors() {
		fmt.Fprintf(&b, "  error: %s\n", e)
	}
	return b.String()
}

func short(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// dump writes every request's body to $LEDGER_AGENTTEST_LOG/<test>/, for a
// person reading what an agent sent.
func (s *Server) dump() {
	dir := os.Getenv("LEDGER_AGENTTEST_LOG")
	if dir == "" {
		return
	}
	dir = filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(s.t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Logf("agenttest: %v", err)
		return
	}
	for _, r := range s.Requests() {
		var pretty bytes.Buffer
		if json.Indent(&pretty, r.Body, "", "  ") != nil {
			pretty.Reset()
			pretty.Write(r.Body)
		}
		name := fmt.Sprintf("%03d-%s.json", r.Seq, cmpOr(r.Kind, "unanswered"))
		os.WriteFile(filepath.Join(dir, name), pretty.Bytes(), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "digest.txt"), []byte(s.Digest()), 0o644)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
