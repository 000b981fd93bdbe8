package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log"
	"net"
	"net/http"
	"strings"

	"github.com/agentledger/ledger/cmd/internal/engine"
)

//go:embed templates static
var assets embed.FS

// Options configures the server.
type Options struct {
	// AllowRemote accepts requests whatever their Host header. Without it
	// only loopback names are served, so that a web page elsewhere cannot
	// read the ledger through the browser by pointing a name of its own at
	// 127.0.0.1 (DNS rebinding).
	AllowRemote bool
	// Log receives one line per failed request (nil: the standard logger).
	Log *log.Logger
}

// Server serves the web view of one ledger.
type Server struct {
	e     *engine.Engine
	o     Options
	pages map[string]*template.Template
	mux   *http.ServeMux
}

// New returns the web view of the engine's ledger. It opens the store now,
// so that a ledger that cannot be read fails before anything is served.
func New(ctx context.Context, e *engine.Engine, o Options) (*Server, error) {
	if _, err := e.Store(ctx); err != nil {
		return nil, err
	}
	if o.Log == nil {
		o.Log = log.Default()
	}
	s := &Server{e: e, o: o, pages: map[string]*template.Template{}, mux: http.NewServeMux()}
	if err := s.parse(); err != nil {
		return nil, err
	}
	static, err := fs.Sub(assets, "static")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.sessions)
	s.mux.HandleFunc("GET /sessions", s.sessions)
	s.mux.HandleFunc("GET /sessions/{id}", s.session)
	s.mux.HandleFunc("GET /compactions/{id}", s.compaction)
	s.mux.HandleFunc("GET /handoffs/{id}", s.handoff)
	s.mux.HandleFunc("GET /messages/{id}", s.message)
	s.mux.HandleFunc("GET /search", s.search)
	s.mux.HandleFunc("GET /audit", s.audit)
	s.mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, fmt.Errorf("no page at %s", r.URL.Path))
	})
	return s, nil
}

// ServeHTTP serves one request, with the headers every response carries.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Only the server's own script, style and images; no frames, no
	// forms elsewhere, no plugins. Transcript text that escaped the
	// templates' escaping still could not run.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if !s.o.AllowRemote && !loopbackHost(r.Host) {
		s.fail(w, r, http.StatusForbidden, fmt.Errorf("host %q is not this machine's loopback: ledger serve answers "+
			"127.0.0.1, ::1 and localhost only (--allow-remote to serve others)", r.Host))
		return
	}
	if why := crossSite(r); why != "" {
		s.fail(w, r, http.StatusForbidden, errors.New(why))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// crossSite says why a request is one another site made the browser send,
// or "". The Host check does not catch those: a page elsewhere can make
// the browser send a request to 127.0.0.1 (an image, a no-cors fetch, a
// link) that carries Host 127.0.0.1. It cannot read the answer, but the
// request still runs (a search costs CPU) and could act on the ledger. So
// only what the user opens (Sec-Fetch-Site none: the address bar, a
// bookmark) and what the server's own pages ask for (same-origin) are
// served; same-site is refused too, another port of localhost being
// another program's. Clients that send no fetch metadata (curl, older
// browsers) are judged by their Origin, when they send one.
func crossSite(r *http.Request) string {
	const why = "this request comes from another site (%s): ledger serve answers only what is opened in the browser's address bar or asked by its own pages"
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "none", "same-origin":
	default:
		return fmt.Sprintf(why, "Sec-Fetch-Site: "+site)
	}
	if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, "http://"+r.Host) {
		return fmt.Sprintf(why, "Origin: "+o)
	}
	return ""
}

// loopbackHost tells whether a Host header names this machine's loopback.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parse reads every page's template, each with the layout.
func (s *Server) parse() error {
	layout, err := template.New("layout.tmpl").Funcs(funcs).ParseFS(assets, "templates/layout.tmpl")
	if err != nil {
		return err
	}
	for _, name := range []string{"sessions", "session", "compaction", "handoff", "search", "audit", "error"} {
		t, err := layout.Clone()
		if err != nil {
			return err
		}
		if s.pages[name], err = t.ParseFS(assets, "templates/"+name+".tmpl"); err != nil {
			return err
		}
	}
	return nil
}

// page is what the layout needs besides the page's own data.
type page struct {
	Title string
	Nav   string // the menu entry to mark current
	Data  any
}

// render writes a page with status, or a failure when it cannot be made.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout.tmpl", p); err != nil {
		s.o.Log.Printf("ledger serve: %s %s: render %s: %v", r.Method, r.URL, name, err)
		http.Error(w, "ledger: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail renders the error page with its message.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	if status >= 500 {
		s.o.Log.Printf("ledger serve: %s %s: %v", r.Method, r.URL, err)
	}
	s.render(w, r, status, "error", page{Title: http.StatusText(status), Data: struct {
		Status  int
		Text    string
		Message string
	}{status, http.StatusText(status), err.Error()}})
}

// failErr maps an error to its status by its kind (engine.Kind); it is
// the one place that does: a bad parameter (badRequest, an invalid request)
// or an ambiguous session prefix 400, something that does not exist 404, a
// write to a read-only ledger 403, a ledger busy with another writer 503
// (with Retry-After), a request declined on purpose 409, anything else
// 500. A request whose browser went away gets nothing.
func (s *Server) failErr(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	status := http.StatusInternalServerError
	switch engine.Kind(err) {
	case engine.ErrInvalid, engine.ErrAmbiguous:
		status = http.StatusBadRequest
	case engine.ErrNotFound:
		status = http.StatusNotFound
	case engine.ErrReadOnly:
		status = http.StatusForbidden
	case engine.ErrBusy:
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	case engine.ErrBlocked:
		status = http.StatusConflict
	}
	s.fail(w, r, status, err)
}

// badRequest is a request parameter that cannot be read: 400 with the
// message (engine.ErrInvalid).
type badRequest struct{ msg string }

func (b badRequest) Error() string { return b.msg }

// Is makes a badRequest engine.ErrInvalid.
func (b badRequest) Is(target error) bool { return target == engine.ErrInvalid }

func badf(format string, args ...any) error { return badRequest{fmt.Sprintf(format, args...)} }
