package engine

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/agentledger/ledger/transcript"
)

// maxSessionIndex is how much of a Codex session index is read: its last
// bytes, where the newest names are.
const maxSessionIndex = 8 << 20

// codexDated matches the folders of a rollout below its Codex home:
// sessions/YYYY/MM/DD. It is compiled on first use: a package's variables
// are set up at every start of the binary, which every command pays for.
var codexDated = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}$|^\d{2}$`) })

// codexHomeOf is the Codex home of a rollout at
// <home>/sessions/YYYY/MM/DD/rollout-*.jsonl, or "" when it is not laid out
// so. The index's place comes from the rollout's, never from the index.
func codexHomeOf(rollout string) string {
	day := filepath.Dir(rollout)
	month := filepath.Dir(day)
	year := filepath.Dir(month)
	sessions := filepath.Dir(year)
	if filepath.Base(sessions) != "sessions" {
		return ""
	}
	for _, d := range []string{day, month, year} {
		if !codexDated().MatchString(filepath.Base(d)) {
			return ""
		}
	}
	return filepath.Dir(sessions)
}

// codexThreadName is the name Codex gave a rollout's thread in its
// session index, or "". Each index is read once per ingest.
func (in *ingester) codexThreadName(rollout, session string) string {
	home := codexHomeOf(rollout)
	if home == "" || session == "" {
		return ""
	}
	names, ok := in.threadNames[home]
	if !ok {
		names = readSessionIndex(filepath.Join(home, "session_index.jsonl"))
		if in.threadNames == nil {
			in.threadNames = map[string]map[string]string{}
		}
		in.threadNames[home] = names
	}
	return names[strings.ToLower(session)]
}

// readSessionIndex reads the last maxSessionIndex bytes of a Codex session
// index (nil when there is none, or it is not a regular file).
func readSessionIndex(path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	var r io.Reader = f
	if fi.Size() > maxSessionIndex {
		// The first line read may be cut: it is not JSON, and passed over.
		r = io.NewSectionReader(f, fi.Size()-maxSessionIndex, maxSessionIndex)
	}
	return transcript.ReadCodexThreadNames(r)
}
