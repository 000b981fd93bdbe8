package secretstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentledger/ledger/compact"
	"github.com/agentledger/ledger/transcript"
)

// SeededSession is the session of testdata/redact/seeded.jsonl.
const SeededSession = "5eed7a1e-0c0d-4e5a-9b1f-2d3c4b5a6f70"

// seedMarker is how testdata/redact/seeded.jsonl holds a secret:
// {{kind:val|ue}}. The "|" breaks the value, so that the fixture itself
// holds nothing shaped like a secret (secret scanners and push protection
// would flag it); JoinSeeded joins it.
var seedMarker = regexp.MustCompile(`\{\{([a-z0-9-]+):(.*?)\}\}`)

// JoinSeeded reads the seeded Claude Code transcript under root (the
// repository's top folder, relative to the test) and returns it with its
// secrets joined, and the distinct secrets it holds, in order: in user
// text, thinking, assistant text, Bash and Edit and Write tool inputs,
// tool results (cat .env), the session title and a compaction summary.
func JoinSeeded(t testing.TB, root string) (string, []Secret) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "testdata", "redact", "seeded.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var seeds []Secret
	seen := map[string]bool{}
	joined := seedMarker.ReplaceAllStringFunc(string(raw), func(m string) string {
		sub := seedMarker.FindStringSubmatch(m)
		escaped := strings.ReplaceAll(sub[2], "|", "")
		var v string
		if err := json.Unmarshal([]byte(`"`+escaped+`"`), &v); err != nil {
			t.Fatalf("marker %.40s: %v", m, err)
		}
		if !seen[v] {
			seen[v] = true
			seeds = append(seeds, Secret{Kind: sub[1], Value: v})
		}
		return escaped
	})
	return joined, seeds
}

// Seeded reads the seeded transcript under root, secrets joined, and
// returns its messages, its title's and compaction summary's texts, and
// the secrets it holds.
func Seeded(t testing.TB, root string) ([]compact.Message, []string, []Secret) {
	t.Helper()
	joined, seeds := JoinSeeded(t, root)
	st := transcript.State{Format: transcript.FormatClaude}
	var msgs []compact.Message
	var other []string
	_, err := transcript.Read(context.Background(), strings.NewReader(joined), &st, 0, 1, func(r transcript.Record) error {
		if r.Message != nil {
			msgs = append(msgs, *r.Message)
		}
		if r.Session != nil && r.Session.Title != "" {
			other = append(other, r.Session.Title)
		}
		if r.Boundary != nil && r.Boundary.Summary != "" {
			other = append(other, r.Boundary.Summary)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return msgs, other, seeds
}

// Messages reads a transcript of any format the readers know and returns
// its messages; nil when the format is not recognised.
func Messages(t testing.TB, r io.Reader) []compact.Message {
	t.Helper()
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	format, err := transcript.Detect(bytes.NewReader(b.Bytes()))
	if err != nil {
		return nil
	}
	st := transcript.State{Format: format}
	var out []compact.Message
	_, err = transcript.Read(context.Background(), &b, &st, 0, 1, func(r transcript.Record) error {
		if r.Message != nil {
			out = append(out, *r.Message)
		}
		return nil
	})
	if err != nil {
		t.Fatal(fmt.Errorf("read transcript: %w", err))
	}
	return out
}

// Texts are the search texts of a transcript's messages (see Messages).
func Texts(t testing.TB, r io.Reader) []string {
	t.Helper()
	var out []string
	for _, m := range Messages(t, r) {
		out = append(out, m.SearchText())
	}
	return out
}

// CorpusMessages reads every transcript (*.jsonl) below dir and returns
// their messages.
func CorpusMessages(t testing.TB, dir string) []compact.Message {
	t.Helper()
	var out []compact.Message
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		out = append(out, Messages(t, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Corpus is the real transcript corpus ($LEDGER_CORPUS, else
// shared/corpus beside the repository whose top folder is root), or ""
// when it is absent.
func Corpus(root string) string {
	dir := os.Getenv("LEDGER_CORPUS")
	if dir == "" {
		dir = filepath.Join(root, "..", "shared", "corpus")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}
