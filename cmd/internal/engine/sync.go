package engine

import (
	"context"
	"errors"

	"github.com/agentledger/ledger/store"
)

// SyncResult is what `ledger sync` pushed, and where.
type SyncResult struct {
	To string `json:"to"` // the server, without its password
	store.PushCounts
	// Failed are the sessions the server refused (the rest were pushed).
	Failed []store.PushFailure `json:"failed"`
}

// Sync pushes this machine's SQLite ledger to the PostgreSQL ledger at the
// URL to (created and migrated there if new): what is new since the last
// sync of this ledger (its host and file name it on the server), each
// session in one transaction of the server, its secrets redacted with this
// ledger's rules before they leave.
func (e *Engine) Sync(ctx context.Context, to string) (SyncResult, error) {
	if !store.IsURL(to) {
		return SyncResult{}, invalidf("sync pushes to a team ledger on PostgreSQL: %q is not a postgres:// URL", to)
	}
	st, err := e.Store(ctx)
	if err != nil {
		return SyncResult{}, err
	}
	if st.Shared() {
		return SyncResult{}, invalidf("sync pushes a local SQLite ledger to a server: --db is a server already")
	}
	dst, err := openStore(ctx, Config{DB: to, Host: e.cfg.Host, Local: e.cfg.Local}, Write)
	if err != nil {
		return SyncResult{}, err
	}
	defer dst.Close()
	res := SyncResult{To: dst.Location(), Failed: []store.PushFailure{}}
	res.PushCounts, err = st.Push(ctx, dst, st.Host()+":"+AbsPath(st.Path()))
	var pe *store.PushError
	if errors.As(err, &pe) {
		res.Failed = pe.Failed
	}
	return res, err
}
