package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/handoff"
)

func TestWriterRedactsUnlessTurnedOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const secret = "sk_live_51HxZq8vLw2pXr0Tm2Kc5Wn8Yp1Gd4F"
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("redact=", on), func(t *testing.T) {
			var opts []Option
			if !on {
				opts = append(opts, WithoutRedaction())
			}
			s := openTemp(t, opts...)
			w, err := s.NewWriter(ctx, "claude")
			if err != nil {
				t.Fatal(err)
			}
			defer w.Rollback()
			if err := w.PatchSession(ctx, SessionPatch{ID: "s1", Title: "rotate " + secret}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.AddBoundary(ctx, compact.Boundary{UUID: "b1", SessionID: "s1", Time: time.Now(), Trigger: "auto",
				Summary: "summary: key " + secret}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.AddMessage(ctx, compact.Message{UUID: "m1", SessionID: "s1", Role: compact.RoleUser,
				Blocks: []compact.Block{{Kind: compact.BlockToolResult, Text: "STRIPE_KEY=" + secret}}}); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(ctx, nil); err != nil {
				t.Fatal(err)
			}
			var stored []string
			if err := s.db.Select(&stored, `SELECT text || coalesce(blocks, '') FROM messages
				UNION ALL SELECT summary FROM compactions UNION ALL SELECT title FROM sessions`); err != nil {
				t.Fatal(err)
			}
			all := strings.Join(stored, "\n")
			if got := strings.Contains(all, secret); got == on {
				t.Errorf("redaction %v: secret stored = %v\n%s", on, got, all)
			}
			if got := w.Counts().Redacted; (got == 3) != on {
				t.Errorf("redaction %v: Counts().Redacted = %d", on, got)
			}
		})
	}
}

func TestAddHandoffRedacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTemp(t)
	const secret = "glpat-Zq8vLw2pXr0Tm2Kc5Wn8"
	doc := handoff.Doc{Session: "s1", Task: "rotate " + secret, NextSteps: []string{"revoke " + secret}, CreatedAt: time.Now(),
		Trigger: "manual", Markdown: "## Task\nrotate " + secret}
	red := s.RedactHandoff(doc)
	if strings.Contains(red.Task, secret) || strings.Contains(red.NextSteps[0], secret) || !strings.Contains(doc.NextSteps[0], secret) {
		t.Errorf("RedactHandoff: %+v (caller's doc: %+v)", red, doc)
	}
	w, err := s.NewWriter(ctx, "claude")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.PatchSession(ctx, SessionPatch{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AddHandoff(ctx, NewHandoff{Doc: doc}); err != nil {
		t.Fatal(err)
	}
	var row struct {
		Task     string `db:"task"`
		Sections string `db:"sections"`
		Markdown string `db:"markdown"`
	}
	if err := s.db.Get(&row, `SELECT task, sections, markdown FROM handoffs`); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(row.Task+row.Sections+row.Markdown, secret) || !json.Valid([]byte(row.Sections)) {
		t.Errorf("stored handoff holds the secret: %+v", row)
	}
}
