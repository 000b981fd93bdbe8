package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/store"
	"github.com/agentledger/ledger/store/storetest"
)

// kindErrors are errors of each kind as the engine returns them, the
// store's types and the drivers' own among them.
var kindErrors = []struct {
	name string
	err  error
	kind error
}{
	{"invalid request", engine.CheckSearch("nope", "", 1), engine.ErrInvalid},
	{"not a ledger", &store.NotLedgerError{Location: `"mysql://x"`, Why: "is not a postgres:// URL"}, engine.ErrInvalid},
	{"ambiguous", fmt.Errorf("audit: %w", &store.AmbiguousError{Prefix: "ab", Candidates: []string{"ab1", "ab2"}}), engine.ErrAmbiguous},
	{"not found", fmt.Errorf("no session %q: %w", "zz", engine.ErrNotFound), engine.ErrNotFound},
	{"read-only", &store.ReadOnlyError{Path: "/l.db", Err: errors.New("permission denied")}, engine.ErrReadOnly},
	{"read-only server", fmt.Errorf("note: %w", &pgconn.PgError{Code: "25006"}), engine.ErrReadOnly},
	{"busy", fmt.Errorf("begin: %w", &pgconn.PgError{Code: "55P03"}), engine.ErrBusy},
	{"blocked", engine.BlockError{Reason: "run /clear"}, engine.ErrBlocked},
	{"failure", errors.New("disk I/O error"), nil},
}

// TestExitCodeByKind: each kind of error exits with the code
// docs/contract.md gives it.
func TestExitCodeByKind(t *testing.T) {
	t.Parallel()
	want := map[error]int{
		engine.ErrInvalid: exitUsage, engine.ErrAmbiguous: exitUsage, engine.ErrNotFound: exitNotFound,
		engine.ErrReadOnly: exitFailure, engine.ErrBusy: exitFailure, engine.ErrBlocked: exitBlock, nil: exitFailure,
	}
	for _, tc := range kindErrors {
		if k := engine.Kind(tc.err); k != tc.kind {
			t.Errorf("%s: kind %v, want %v", tc.name, k, tc.kind)
		}
		if got := exitCode(tc.err); got != want[tc.kind] {
			t.Errorf("%s (%v): exit %d, want %d", tc.name, tc.err, got, want[tc.kind])
		}
	}
	if got := exitCode(usagef("--limit %d: want at least 1", 0)); got != exitUsage {
		t.Errorf("a usage error: exit %d, want %d", got, exitUsage)
	}
}

// TestAmbiguousExitsUsage: a session prefix that several sessions begin
// with is a bad argument: exit 2, the candidates on the one error line.
func TestAmbiguousExitsUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	db := storetest.MigratedFile(t, filepath.Join(home, "ledger.db"))
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"abc111", "abc222"} {
		if _, err := w.AddMessage(ctx, compact.Message{UUID: id + "-m", SessionID: id, Role: compact.RoleUser,
			Blocks: []compact.Block{{Kind: compact.BlockText, Text: "hello"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	r := runCmd(t, home, "", "--db", db, "audit", "abc")
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, "ledger: ") || !strings.Contains(r.stderr, "abc111, abc222") {
		t.Errorf("audit abc: exit %d, stderr %q; want %d and the candidates", r.code, r.stderr, exitUsage)
	}
	if r := runCmd(t, home, "", "--db", db, "audit", "zzz"); r.code != exitNotFound {
		t.Errorf("audit zzz: exit %d, stderr %q; want %d", r.code, r.stderr, exitNotFound)
	}
}
