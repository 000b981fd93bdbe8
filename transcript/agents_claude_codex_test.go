package transcript

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
)

// The transcripts of real runs of the pinned Claude Code and Codex, with
// ledger's hooks installed (cmd/internal/agenttest/e2e's TestAgentFixtures
// writes them to agentsDir): they pin each format without npm.

// ledgerOwnOutput are texts only ledger's own hook output holds: its
// fence, Claude Code's wrapping of a SessionStart context, ledger's offer.
var ledgerOwnOutput = []string{"<ledger-record", "SessionStart hook additional context", "Recorded by ledger from earlier agent sessions"}

// TestClaudeCode2_1_328 reads a Claude Code 2.1.328 session: a Write,
// /compact (a partial compaction: Claude Code kept the last messages
// verbatim), then a resumed run that auto-compacts. Every line is read
// (no bad input); the records 2.1.3x added are handled on purpose:
// attachments (ledger's own hook output among them) are not conversation
// but links of the uuid chain, cost-state gives the session's cost,
// api-request* and the rest are skipped.
func TestClaudeCode2_1_328(t *testing.T) {
	recs, res, _ := readFile(t, filepath.Join(agentsDir, "claude-2.1.328", "session.jsonl"))
	if res.Skipped != 0 {
		t.Errorf("skipped %d lines as bad input: %+v", res.Skipped, res.Skips)
	}
	var users []string
	var summaries int
	var bounds []compact.Boundary
	var cost *compact.Cost
	uuids := map[string]bool{}
	for _, r := range recs {
		if m := r.Message; m != nil {
			uuids[m.UUID] = true
			text := m.Text()
			for _, s := range ledgerOwnOutput {
				if strings.Contains(text, s) {
					t.Errorf("message %s (%s) holds ledger's own hook output: %.120q", m.UUID, m.Role, text)
				}
			}
			if strings.Contains(text, "Primary working directory") || strings.Contains(text, "You are powered by the model") {
				t.Errorf("an attachment of Claude Code's was read as message %s: %.120q", m.UUID, text)
			}
			if m.CompactSummary {
				summaries++
			}
			if m.Role == compact.RoleUser && !m.Meta && !m.CompactSummary && len(m.Blocks) > 0 && m.Blocks[0].Kind == compact.BlockText {
				users = append(users, text)
			}
		}
		if b := r.Boundary; b != nil {
			bounds = append(bounds, *b)
		}
		if s := r.Session; s != nil {
			if s.Cost != nil {
				c := *s.Cost
				cost = &c
			}
			if s.ContextWindow != 0 {
				t.Errorf("a window stated for claude-opus-5-5 (%d): this transcript states none", s.ContextWindow)
			}
		}
	}
	if want := []string{"Write tides.md with the morning high tide", "Add b.txt and c.txt"}; strings.Join(users, "|") != strings.Join(want, "|") {
		t.Errorf("the user's words = %q, want %q", users, want)
	}
	if summaries != 2 || len(bounds) != 2 {
		t.Fatalf("%d summaries and %d boundaries, want 2 and 2", summaries, len(bounds))
	}
	manual, auto := bounds[0], bounds[1]
	if manual.Trigger != "manual" || manual.PreTokens != 5175 || auto.Trigger != "auto" || auto.PreTokens != 990199 || auto.PostTokens <= 0 {
		t.Errorf("boundaries = %+v / %+v", manual, auto)
	}
	// Both kept part of the conversation verbatim; each one's logical
	// parent is the last message before it, through the hook attachments
	// Claude Code names (the manual one) or, when it names a line it never
	// wrote (the auto one), the preserved segment's tail.
	for i, b := range bounds {
		if b.Preserved == nil || b.Preserved.Messages == 0 || !uuids[b.Preserved.HeadUUID] || !uuids[b.Preserved.TailUUID] {
			t.Errorf("boundary %d: preserved %+v, want a head and tail among the messages and a count", i+1, b.Preserved)
			continue
		}
		if !uuids[b.LogicalParentUUID] || b.LogicalParentUUID != b.Preserved.TailUUID {
			t.Errorf("boundary %d: logical parent %q, want the last message before it (%s)", i+1, b.LogicalParentUUID, b.Preserved.TailUUID)
		}
	}
	if cost == nil || cost.USD != 0.2332 || cost.LinesAdded != 8 || cost.LinesRemoved != 0 {
		t.Errorf("cost = %+v, want the last cost-state's $0.2332, 8 lines added, 0 removed", cost)
	}
}

// TestClaudeCode2_1_328OneM: a session run with --model
// claude-sonnet-4-5[1m] states its 1M window: the assistant records'
// requestedModel and the 1M beta in its api-request records.
func TestClaudeCode2_1_328OneM(t *testing.T) {
	recs, res, _ := readFile(t, filepath.Join(agentsDir, "claude-2.1.328", "sonnet-1m.jsonl"))
	if res.Skipped != 0 {
		t.Errorf("skipped %d lines: %+v", res.Skipped, res.Skips)
	}
	var window int64
	var model string
	for _, r := range recs {
		if s := r.Session; s != nil && s.ContextWindow != 0 {
			window = s.ContextWindow
		}
		if m := r.Message; m != nil && m.Model != "" {
			model = m.Model
		}
	}
	if window != compact.Context1M || model != "claude-sonnet-4-5" {
		t.Errorf("window %d, model %q; want 1,000,000 stated for claude-sonnet-4-5", window, model)
	}
}

// TestCodex0_169 reads a Codex 0.169.0 rollout that auto-compacted twice
// (local compaction, with ledger's hooks installed): every line read, two
// compactions with their summaries, the window Codex states, and neither
// the model's compaction answer (metadata.compaction_output, also in the
// compacted line) nor ledger's own SessionStart context (a developer
// message) taken for conversation.
func TestCodex0_169(t *testing.T) {
	recs, res, _ := readFile(t, filepath.Join(agentsDir, "codex-0.169.0", "rollout.jsonl"))
	if res.Skipped != 0 {
		t.Errorf("skipped %d lines: %+v", res.Skipped, res.Skips)
	}
	var bounds []compact.Boundary
	var window int64
	var assistant []string
	for _, r := range recs {
		if b := r.Boundary; b != nil {
			bounds = append(bounds, *b)
		}
		if s := r.Session; s != nil && s.ContextWindow > 0 {
			window = s.ContextWindow
		}
		if m := r.Message; m != nil {
			for _, s := range ledgerOwnOutput {
				if strings.Contains(m.Text(), s) {
					t.Errorf("message %s (%s) holds ledger's own hook output: %.120q", m.UUID, m.Role, m.Text())
				}
			}
			if m.Role == compact.RoleAssistant && len(m.Blocks) > 0 && m.Blocks[0].Kind == compact.BlockText {
				assistant = append(assistant, m.Text())
			}
		}
	}
	if len(bounds) != 2 || window != compact.CodexGPT5Window {
		t.Fatalf("%d boundaries, window %d; want 2 and %d", len(bounds), window, compact.CodexGPT5Window)
	}
	for i, b := range bounds {
		if b.Trigger != "auto" || b.PreTokens <= 100_000 || !strings.HasSuffix(b.Summary, "The user asked for a.txt, b.txt and c.txt.") {
			t.Errorf("boundary %d = %+v", i+1, b)
		}
	}
	if strings.Join(assistant, "|") != "a, b and c are written." {
		t.Errorf("the assistant's words = %q, want only its answer (not the compaction summaries)", assistant)
	}
}
