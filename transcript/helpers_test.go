package transcript

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/agentledger/ledger/compact"
)

// readBytes reads data from its start as format f.
func readBytes(t testing.TB, f Format, data []byte) ([]Record, Result, *State) {
	t.Helper()
	st := &State{Format: f}
	var recs []Record
	res, err := Read(context.Background(), bytes.NewReader(data), st, 0, 1, func(r Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return recs, res, st
}

// readFile detects and reads the file at path from its start.
func readFile(t testing.TB, path string) ([]Record, Result, *State) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return readBytes(t, detectData(t, path, data), data)
}

// detectFile detects the format of the file at path.
func detectFile(t testing.TB, path string) Format {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return detectData(t, path, data)
}

func detectData(t testing.TB, path string, data []byte) Format {
	t.Helper()
	f, err := Detect(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("detect %s: %v", path, err)
	}
	return f
}

// tally sums up records.
type tally struct {
	messages, boundaries, sessions  int
	roles                           map[compact.Role]int
	responseIDs                     map[string]bool
	usages                          int
	toolUse, toolResult, isError    int
	thinking, images                int
	meta, compactSummary, sidechain int
	titles                          []string
	sessionIDs                      map[string]bool
	bounds                          []compact.Boundary
}

func tallyOf(recs []Record) tally {
	t := tally{roles: map[compact.Role]int{}, responseIDs: map[string]bool{}, sessionIDs: map[string]bool{}}
	for _, r := range recs {
		if s := r.Session; s != nil {
			t.sessions++
			if s.Title != "" {
				t.titles = append(t.titles, s.Title)
			}
			if s.ID != "" {
				t.sessionIDs[s.ID] = true
			}
		}
		if b := r.Boundary; b != nil {
			t.boundaries++
			t.bounds = append(t.bounds, *b)
		}
		m := r.Message
		if m == nil {
			continue
		}
		t.messages++
		t.roles[m.Role]++
		if m.ResponseID != "" {
			t.responseIDs[m.ResponseID] = true
		}
		if m.Usage != nil {
			t.usages++
		}
		if m.Meta {
			t.meta++
		}
		if m.CompactSummary {
			t.compactSummary++
		}
		if m.Sidechain {
			t.sidechain++
		}
		for _, b := range m.Blocks {
			switch b.Kind {
			case compact.BlockToolUse:
				t.toolUse++
			case compact.BlockToolResult:
				t.toolResult++
				if b.IsError {
					t.isError++
				}
			case compact.BlockThinking:
				t.thinking++
			case compact.BlockImage:
				t.images++
			}
		}
	}
	return t
}
