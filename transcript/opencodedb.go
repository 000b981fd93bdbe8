package transcript

import (
	"path/filepath"
	"strings"
)

// The formats of OpenCode's and Kilo's session databases, which the
// transcript/opencode package reads (Kilo CLI is a fork of OpenCode: the
// same tables).
const (
	FormatOpenCode Format = "opencode"
	FormatKilo     Format = "kilo"
)

// DatabaseFormat tells whether the file at path is named as OpenCode's or
// Kilo's session database, and which: opencode.db (opencode-<channel>.db
// for a pre-release channel) in OpenCode's data folder, kilo.db
// (kilo-<channel>.db) in Kilo's. The name decides; the reader then checks
// the tables.
func DatabaseFormat(path string) (Format, bool) {
	name := filepath.Base(path)
	stem, ok := strings.CutSuffix(name, ".db")
	if !ok {
		return "", false
	}
	for _, f := range []Format{FormatOpenCode, FormatKilo} {
		if stem == string(f) || strings.HasPrefix(stem, string(f)+"-") {
			return f, true
		}
	}
	return "", false
}
