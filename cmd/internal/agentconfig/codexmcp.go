package agentconfig

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Codex reads MCP servers from ~/.codex/config.toml:
//
//	[mcp_servers.ledger]
//	command = "/usr/local/bin/ledger"
//	args = ["mcp"]
//
// which is what `codex mcp add ledger -- ledger mcp` writes.
//
// No maintained Go library edits TOML in place: go-toml v2 and BurntSushi's
// decoder re-encode a whole document (comments, order and layout lost), and
// go-toml v1's tree does the same on write. So the edit is textual, and
// confined: go-toml v2's parser (package unstable, already linked for
// gitleaks' rules) finds where the [mcp_servers.ledger] table's header is,
// by the byte offsets it reports, so that a header-like line inside a
// multi-line string is never taken for one; ledger adds or removes exactly
// that table's lines, and every other byte stays. The result is decoded
// again and checked before it is written.

// codexTable is the table ledger writes; sub-tables of it (a user's
// [mcp_servers.ledger.env]) go with it.
var codexTable = []string{"mcp_servers", MCPName}

// InstallCodexMCP returns config.toml with ledger's [mcp_servers.ledger]
// table: appended at the end (after a blank line, and without a final
// line break when the file has none, so that uninstall gives the file
// back byte for byte), or, when ledger's is there already, its command and
// args lines rewritten in place and the rest of the table kept (one up to
// date changes nothing). A server named "ledger" that
// is not ledger's, or one written as a dotted key or an inline table, is
// an error: not ledger's to replace.
func InstallCodexMCP(doc []byte, s MCPServer) ([]byte, error) {
	cfg, err := decodeCodex(doc)
	if err != nil {
		return nil, err
	}
	table := codexBlock(s)
	if cfg.exists {
		switch {
		case !IsLedgerMCP(cfg.command, cfg.args):
			return nil, fmt.Errorf("an MCP server named %q is already configured there, and it is not ledger's (command %q): remove or rename it first", MCPName, cfg.command)
		case s.equal(cfg.command, cfg.args):
			return doc, nil
		}
		blocks, keys, err := codexBlocks(doc)
		if err != nil {
			return nil, err
		}
		cmd, hasCmd := keys["command"]
		args, hasArgs := keys["args"]
		if len(blocks) == 0 || !hasCmd || !hasArgs {
			return nil, errors.New("ledger's server in config.toml is written as a dotted key or an inline table, which ledger does not edit: remove it (codex mcp remove ledger), then install again")
		}
		// Rewrite its command and args lines in place, the later first;
		// whatever else the user set in the table (a timeout, env) stays.
		first, second := cmd, args
		firstLine, secondLine := "command = "+tomlString(s.Command), "args = "+tomlArray(s.Args)
		if first.start > second.start {
			first, second = second, first
			firstLine, secondLine = secondLine, firstLine
		}
		out := splice(doc, second.start, second.end, lineFor(doc, second, secondLine))
		out = splice(out, first.start, first.end, lineFor(doc, first, firstLine))
		return checkCodex(out, &s)
	}
	var out []byte
	switch {
	case len(doc) == 0:
		out = []byte(table)
	case bytes.HasSuffix(doc, []byte("\n")):
		out = append(append(slices.Clip(doc), '\n'), table...)
	default:
		out = append(append(slices.Clip(doc), "\n\n"...), strings.TrimSuffix(table, "\n")...)
	}
	return checkCodex(out, &s)
}

// UninstallCodexMCP returns config.toml without ledger's
// [mcp_servers.ledger] table (and its sub-tables), and without the blank
// line install put before it; everything else byte for byte. A server
// named "ledger" that is not ledger's stays, and so does one written in a
// form ledger never writes (a dotted key, an inline table).
func UninstallCodexMCP(doc []byte) ([]byte, error) {
	cfg, err := decodeCodex(doc)
	if err != nil {
		return nil, err
	}
	if !cfg.exists || !IsLedgerMCP(cfg.command, cfg.args) {
		return doc, nil
	}
	blocks, _, err := codexBlocks(doc)
	if err != nil || len(blocks) == 0 {
		return doc, err
	}
	out := doc
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		start, end := b.start, b.end
		switch {
		case b.end == len(out) && !bytes.HasSuffix(out, []byte("\n")) && bytes.HasSuffix(out[:start], []byte("\n\n")):
			start -= 2 // install's "\n\n" before a table at the end of a file with no final line break
		case bytes.HasSuffix(out[:start], []byte("\n\n")):
			start-- // the blank line before the table
		case b.end == len(out) && !bytes.HasSuffix(out, []byte("\n")) && bytes.HasSuffix(out[:start], []byte("\n")):
			start--
		case bytes.HasPrefix(out[end:], []byte("\n")):
			end++ // no blank line before the table: the one after it goes
		}
		out = splice(out, start, end, "")
	}
	return checkCodex(out, nil)
}

// codexServer is what config.toml says of the server named "ledger".
type codexServer struct {
	exists  bool
	command string
	args    []string
}

// decodeCodex decodes config.toml for its [mcp_servers.ledger].
func decodeCodex(doc []byte) (codexServer, error) {
	var cfg map[string]any
	if err := toml.Unmarshal(doc, &cfg); err != nil {
		return codexServer{}, fmt.Errorf("read config.toml: %w", err)
	}
	servers, _ := cfg["mcp_servers"].(map[string]any)
	v, ok := servers[MCPName]
	if !ok {
		return codexServer{}, nil
	}
	s := codexServer{exists: true}
	e, _ := v.(map[string]any) // not a table: no command, not ledger's
	s.command, _ = e["command"].(string)
	if list, ok := e["args"].([]any); ok {
		for _, a := range list {
			str, _ := a.(string)
			s.args = append(s.args, str)
		}
	}
	return s, nil
}

// checkCodex decodes an edited config.toml again: it must be valid TOML
// and hold ledger's server as want says (nil: none). An edit that fails
// the check is never written.
func checkCodex(doc []byte, want *MCPServer) ([]byte, error) {
	got, err := decodeCodex(doc)
	switch {
	case err != nil:
		return nil, fmt.Errorf("the edited config.toml would not be valid (%v): nothing written", err)
	case want == nil && got.exists:
		return nil, errors.New("ledger's server is still in the edited config.toml: nothing written")
	case want != nil && !want.equal(got.command, got.args):
		return nil, errors.New("ledger's server did not come out as written in the edited config.toml: nothing written")
	}
	return doc, nil
}

// codexBlock is the [mcp_servers.ledger] table ledger writes.
func codexBlock(s MCPServer) string {
	return "[mcp_servers." + MCPName + "]\ncommand = " + tomlString(s.Command) + "\nargs = " + tomlArray(s.Args) + "\n"
}

// lineFor is line as the replacement of the key's lines b: with a line
// break unless b ends the file without one.
func lineFor(doc []byte, b block, line string) string {
	if b.end == len(doc) && !bytes.HasSuffix(doc, []byte("\n")) {
		return line
	}
	return line + "\n"
}

// tomlArray writes strings as a TOML array.
func tomlArray(list []string) string {
	q := make([]string, len(list))
	for i, a := range list {
		q[i] = tomlString(a)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// block is lines of a document: from the start of a table's header line
// (or a key's) to the end of its last line that is not blank or a comment
// (those before what follows belong to what follows).
type block struct{ start, end int }

// expr is a top-level expression of a TOML document: a table header or a
// key/value, with its dotted key and the start of its line.
type expr struct {
	table bool
	key   []string
	start int
}

// parseCodex lists config.toml's top-level expressions, in order.
func parseCodex(doc []byte) ([]expr, error) {
	var out []expr
	var p unstable.Parser
	p.Reset(doc)
	for p.NextExpression() {
		e := p.Expression()
		x := expr{table: e.Kind == unstable.Table || e.Kind == unstable.ArrayTable}
		if !x.table && e.Kind != unstable.KeyValue {
			continue
		}
		first := -1
		it := e.Key()
		for it.Next() {
			k := it.Node()
			if first < 0 {
				first = int(k.Raw.Offset)
			}
			x.key = append(x.key, string(k.Data))
		}
		if first < 0 {
			return nil, errors.New("read config.toml: an expression without a key")
		}
		x.start = bytes.LastIndexByte(doc[:first], '\n') + 1
		out = append(out, x)
	}
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("read config.toml: %w", err)
	}
	return out, nil
}

// codexBlocks finds [mcp_servers.ledger] and its sub-tables, in order, and
// the lines of the keys of [mcp_servers.ledger] itself.
func codexBlocks(doc []byte) ([]block, map[string]block, error) {
	exprs, err := parseCodex(doc)
	if err != nil {
		return nil, nil, err
	}
	var blocks []block
	keys := map[string]block{}
	inLedger := false
	for i, x := range exprs {
		end := len(doc)
		if i+1 < len(exprs) {
			end = exprs[i+1].start
		}
		if x.table {
			inLedger = slices.Equal(x.key, codexTable)
			if len(x.key) >= len(codexTable) && slices.Equal(x.key[:len(codexTable)], codexTable) {
				next := len(doc)
				for _, y := range exprs[i+1:] {
					if y.table {
						next = y.start
						break
					}
				}
				blocks = append(blocks, block{x.start, trimTrailingNotes(doc, x.start, next)})
			}
			continue
		}
		if inLedger && len(x.key) == 1 {
			keys[x.key[0]] = block{x.start, trimTrailingNotes(doc, x.start, end)}
		}
	}
	return blocks, keys, nil
}

// trimTrailingNotes moves end back over the blank and comment-only lines
// that end doc[start:end], keeping the header line itself.
func trimTrailingNotes(doc []byte, start, end int) int {
	for end > start {
		body := doc[start:end]
		if !bytes.HasSuffix(body, []byte("\n")) {
			return end // the file's last line, with no line break: not blank
		}
		prev := bytes.LastIndexByte(body[:len(body)-1], '\n') + 1 // start of the last line
		if prev == 0 {
			return end // the header line
		}
		line := bytes.TrimSpace(body[prev:])
		if len(line) != 0 && line[0] != '#' {
			return end
		}
		end = start + prev
	}
	return end
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
