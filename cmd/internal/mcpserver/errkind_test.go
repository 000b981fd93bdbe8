package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentledger/ledger/cmd/internal/engine"
	"github.com/agentledger/ledger/store"
)

// TestToolErrorByKind: a tool whose work fails with an error of each kind
// (engine.Kind) gives the model a tool error that says what to do, the
// one for its kind; any other failure is a tool error without internals,
// logged in full.
func TestToolErrorByKind(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "ledger.db")
	logs := &strings.Builder{}
	srv, err := New(Config{Engine: openEngine(t, engine.Config{DB: db}), Project: sampleProject, Log: logs})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"invalid", engine.CheckSearch("nope", "", 1), `bad arguments to the invalid tool`},
		{"ambiguous", fmt.Errorf("audit: %w", &store.AmbiguousError{Prefix: "ab", Candidates: []string{"ab1", "ab2"}}), `is ambiguous`},
		{"not_found", fmt.Errorf("no handoff 7: %w", engine.ErrNotFound), "the ledger holds nothing this not_found call asked for"},
		{"read_only", &store.ReadOnlyError{Path: "/l.db", Err: errors.New("permission denied")}, "read-only for this server (permission denied)"},
		{"read_only_server", fmt.Errorf("note: %w", &pgconn.PgError{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"}), "read-only for this server"},
		{"busy", fmt.Errorf("begin: %w", &pgconn.PgError{Code: "55P03", Message: "lock timeout"}), "the ledger is busy"},
		{"blocked", engine.BlockError{Reason: "clear instead"}, "declined on purpose"},
		{"failure", errors.New("open /very/secret/ledger.db: disk I/O error"), "ledger's failure tool could not answer"},
	}
	for _, tc := range tests {
		tool(srv, &mcp.Tool{Name: tc.name, Description: "fails"}, func(context.Context, struct{}) (string, struct{}, error) {
			return "", struct{}{}, tc.err
		})
	}
	cs := serve(t, srv)
	for _, tc := range tests {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.name})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError || !strings.Contains(text, tc.want) || strings.Contains(text, "secret") {
			t.Errorf("%s: error %v, %q; want a tool error saying %q", tc.name, res.IsError, text, tc.want)
		}
	}
	if !strings.Contains(logs.String(), "/very/secret/ledger.db") {
		t.Errorf("the failure's details are not logged:\n%s", logs)
	}
}
