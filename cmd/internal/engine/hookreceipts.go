package engine

import (
	"context"

	"github.com/agentledger/ledger/store"
)

// HookLog lists the receipts hook runs left in the ledger, newest first:
// of one session when f.SessionID is set (a full id, or a unique prefix of
// a session the ledger holds; an id it does not hold is taken as it is,
// since a hook can run for a session not ingested yet).
func (e *Engine) HookLog(ctx context.Context, f store.ReceiptFilter) ([]store.HookReceipt, error) {
	st, err := e.Store(ctx)
	if err != nil {
		return nil, err
	}
	if f.SessionID != "" {
		if _, sess, err := e.Session(ctx, f.SessionID); err == nil {
			f.SessionID = sess.ID
		} else if !notFound(err) {
			return nil, err
		}
	}
	return st.HookReceipts(ctx, f)
}
