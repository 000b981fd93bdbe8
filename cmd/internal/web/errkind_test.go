package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store"
)

// TestStatusByKind: a page whose work fails with an error of each kind
// (engine.Kind) is answered with that kind's status, its message on the
// error page; a busy ledger says when to try again.
func TestStatusByKind(t *testing.T) {
	t.Parallel()
	s := newTestServer(t, buildLedger(t), Options{})
	for _, tc := range []struct {
		name   string
		err    error
		status int
	}{
		{"invalid", engine.CheckSearch("nope", "", 1), http.StatusBadRequest},
		{"bad parameter", badf("page %q: want a number", "x"), http.StatusBadRequest},
		{"ambiguous", fmt.Errorf("session: %w", &store.AmbiguousError{Prefix: "ab", Candidates: []string{"ab1", "ab2"}}), http.StatusBadRequest},
		{"not found", fmt.Errorf("no handoff 7: %w", engine.ErrNotFound), http.StatusNotFound},
		{"read-only", &store.ReadOnlyError{Path: "/l.db", Err: errors.New("permission denied")}, http.StatusForbidden},
		{"busy", fmt.Errorf("begin: %w", &pgconn.PgError{Code: "55P03", Message: "lock timeout"}), http.StatusServiceUnavailable},
		{"blocked", engine.BlockError{Reason: "declined"}, http.StatusConflict},
		{"failure", errors.New("disk I/O error"), http.StatusInternalServerError},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/sessions", nil)
		s.handle(rec, req, tc.err)
		if rec.Code != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, rec.Code, tc.status)
		}
		if retry := rec.Header().Get("Retry-After"); (tc.status == http.StatusServiceUnavailable) != (retry != "") {
			t.Errorf("%s: Retry-After %q", tc.name, retry)
		}
	}
	// A browser that went away gets nothing written.
	rec := httptest.NewRecorder()
	s.handle(rec, httptest.NewRequest("GET", "/sessions", nil), fmt.Errorf("search: %w", context.Canceled))
	if rec.Body.Len() != 0 {
		t.Errorf("a cancelled request got a page: %d bytes", rec.Body.Len())
	}
}
