package transcript

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

// GenOptions shapes a generated Claude Code session.
type GenOptions struct {
	// Seed makes the output deterministic: the same seed, the same bytes.
	Seed uint64
	// SessionID of the session (generated from Seed when empty).
	SessionID string
	// Project is the session's cwd.
	Project string
	// Messages is how many user and assistant messages to write.
	Messages int
	// CompactEvery writes a compact_boundary and its summary every so many
	// messages (0: never).
	CompactEvery int
	// Start is the first message's time.
	Start time.Time
	// Shape is how big the lines are. The zero value is GenHeavy, the
	// original shape, so that the bytes the tests generate do not move;
	// ledger-gen and ledger-bench default to GenReal.
	Shape GenShape
}

// GenShape is the size profile of a generated transcript.
type GenShape int

const (
	// GenHeavy writes about 2.6 KB of JSONL per message: long tool outputs
	// (20-80 lines for a Read) and 2-9 hook progress lines around every
	// tool call, as in a setup with many hooks.
	GenHeavy GenShape = iota
	// GenReal writes about 1.1 KB per message, the size of real Claude
	// Code lines: shorter tool outputs and a hook progress pair around a
	// third of the tool calls.
	GenReal
)

// ParseGenShape reads a shape's name: "real" or "heavy".
func ParseGenShape(s string) (GenShape, error) {
	switch s {
	case "real":
		return GenReal, nil
	case "heavy":
		return GenHeavy, nil
	}
	return 0, fmt.Errorf("unknown shape %q (real or heavy)", s)
}

func (s GenShape) String() string {
	if s == GenReal {
		return "real"
	}
	return "heavy"
}

// genSizes are a shape's line counts: each a minimum and a span (the
// count is min + a random number below span).
type genSizes struct {
	progress, read, bash, grep [2]int
	// progressEvery: hook progress lines around one tool call in this many
	progressEvery int
}

var shapeSizes = map[GenShape]genSizes{
	GenHeavy: {progress: [2]int{2, 8}, read: [2]int{20, 60}, bash: [2]int{5, 25}, grep: [2]int{3, 10}, progressEvery: 1},
	GenReal:  {progress: [2]int{2, 1}, read: [2]int{3, 13}, bash: [2]int{2, 7}, grep: [2]int{1, 5}, progressEvery: 3},
}

// Generate writes a realistic Claude Code transcript: user requests,
// assistant text split over several lines of one API response, tool calls
// (Read, Edit, Bash, Grep, TodoWrite) with their results, usage on every
// assistant line, hook progress lines and file-history snapshots between
// them, and compactions. It is the corpus of ledger's benchmarks; its
// shape follows the real transcripts in the shared corpus (about half the
// lines are progress records, tool results carry most of the bytes).
func Generate(w io.Writer, o GenOptions) error {
	g := &generator{r: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)), o: o, sz: shapeSizes[o.Shape]}
	if g.o.SessionID == "" {
		g.o.SessionID = g.uuid()
	}
	if g.o.Project == "" {
		g.o.Project = "/home/dev/src/" + pick(g.r, projects)
	}
	if g.o.Start.IsZero() {
		g.o.Start = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(o.Seed%10000) * time.Hour)
	}
	g.now = g.o.Start
	g.bw = bufio.NewWriterSize(w, 1<<16)
	g.enc = json.NewEncoder(g.bw)
	g.enc.SetEscapeHTML(false)
	g.context = 12000
	for g.written < o.Messages && g.err == nil {
		g.turn()
	}
	if g.err != nil {
		return g.err
	}
	return g.bw.Flush()
}

type generator struct {
	r       *rand.Rand
	o       GenOptions
	sz      genSizes
	bw      *bufio.Writer
	enc     *json.Encoder
	err     error
	now     time.Time
	parent  string
	written int
	context int64
	req     int
	tool    int
}

var (
	projects = []string{"payments", "inventory", "gateway", "search", "billing", "auth-service", "webapp"}
	dirs     = []string{"pkg/auth", "internal/store", "cmd/server", "api/v1", "lib/billing", "src/components", "web/routes", "pkg/cache"}
	files    = []string{"session_store.go", "handler.go", "reserve.py", "invoice.ts", "router.go", "cache_test.go", "schema.sql", "index.tsx", "retry.go", "config.yaml"}
	idents   = []string{"TestSessionExpiry", "NewSessionStore", "ReserveStock", "InvoiceTotal", "parseConfig", "withRetry", "CacheEntry", "handleWebhook", "validateToken", "RateLimiter"}
	words    = strings.Fields(`the a to of and in is for that it with on this be as we not are by at from
		test function error returns value when file change code fix should call use can if then run failing
		passes expected got nil pointer request response handler session token cache timeout retry config
		update query index build module import package type struct field method interface context deadline
		goroutine channel lock mutex race flaky assertion coverage benchmark latency memory allocation`)
	prompts = []string{"Fix the failing %s test in %s", "Add retries with backoff to %s in %s", "Why does %s time out in %s?",
		"Refactor %s in %s so it takes a context", "Write a benchmark for %s in %s", "Review the error handling of %s in %s"}
	hookNames = []string{"tmux-waiting.sh clear", "notify.sh", "bd sync", "lint-on-save.sh"}
	commands  = []string{"go test ./%s/...", "go test -race -run %s ./%s/", "npm test -- %s", "pytest -q tests/ -k %s", "go vet ./%s/", "git diff --stat"}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func (g *generator) uuid() string {
	a, b := g.r.Uint64(), g.r.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", a>>32, a>>16&0xffff, a&0xfff, b>>48&0x3fff|0x8000, b&0xffffffffffff)
}

func (g *generator) sentence(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		switch g.r.IntN(12) {
		case 0:
			sb.WriteString(g.path())
		case 1:
			sb.WriteString(pick(g.r, idents))
		default:
			sb.WriteString(pick(g.r, words))
		}
	}
	sb.WriteByte('.')
	return sb.String()
}

func (g *generator) path() string { return pick(g.r, dirs) + "/" + pick(g.r, files) }

func (g *generator) tick() string {
	g.now = g.now.Add(time.Duration(500+g.r.IntN(20000)) * time.Millisecond)
	return g.now.Format("2006-01-02T15:04:05.000Z")
}

// line writes one record with the envelope every Claude Code line carries.
func (g *generator) line(typ string, fields map[string]any) string {
	id := g.uuid()
	rec := map[string]any{
		"parentUuid": nullable(g.parent), "isSidechain": false, "userType": "external", "cwd": g.o.Project,
		"sessionId": g.o.SessionID, "version": "2.1.40", "gitBranch": "main", "type": typ, "uuid": id, "timestamp": g.tick(),
	}
	for k, v := range fields {
		rec[k] = v
	}
	if g.err == nil {
		g.err = g.enc.Encode(rec)
	}
	return id
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// progress writes the hook progress lines Claude Code logs around a tool
// call: in the real corpus about six per call, 40% of a file's bytes.
func (g *generator) progress(tool, toolID string) {
	if g.sz.progressEvery > 1 && g.r.IntN(g.sz.progressEvery) != 0 {
		return
	}
	for i := range g.sz.progress[0] + g.r.IntN(g.sz.progress[1]) {
		event := "PreToolUse"
		if i%2 == 1 {
			event = "PostToolUse"
		}
		g.line("progress", map[string]any{"data": map[string]any{"type": "hook_progress", "hookEvent": event,
			"hookName": event + ":" + tool, "command": "/home/dev/.claude/hooks/" + pick(g.r, hookNames)},
			"parentToolUseID": toolID, "toolUseID": toolID})
	}
}

func (g *generator) user(content any, extra map[string]any) {
	fields := map[string]any{"message": map[string]any{"role": "user", "content": content}}
	for k, v := range extra {
		fields[k] = v
	}
	g.parent = g.line("user", fields)
	g.written++
}

// assistant writes one API response, one line per content block, each
// repeating the response's id and usage as Claude Code does.
func (g *generator) assistant(blocks []map[string]any) {
	g.req++
	msgID := fmt.Sprintf("msg_01Gen%016x", g.r.Uint64())
	reqID := fmt.Sprintf("req_01Gen%016x", g.r.Uint64())
	grow := int64(200 + g.r.IntN(3000))
	g.context += grow
	usage := map[string]any{"input_tokens": 3 + g.r.IntN(8), "cache_creation_input_tokens": grow,
		"cache_read_input_tokens": g.context - grow, "output_tokens": 20 + g.r.IntN(600), "service_tier": "standard"}
	for _, b := range blocks {
		g.parent = g.line("assistant", map[string]any{"requestId": reqID, "message": map[string]any{
			"model": "claude-sonnet-4-5-20250929", "id": msgID, "type": "message", "role": "assistant",
			"content": []any{b}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
		g.written++
	}
}

func (g *generator) toolCall(name string, input map[string]any, output string, isErr bool) {
	g.tool++
	id := fmt.Sprintf("toolu_01Gen%012x", g.r.Uint64()&0xffffffffffff)
	g.assistant([]map[string]any{{"type": "tool_use", "id": id, "name": name, "input": input}})
	g.progress(name, id)
	res := map[string]any{"type": "tool_result", "tool_use_id": id, "content": output}
	if isErr {
		res["is_error"] = true
	}
	// Claude Code logs the tool's output twice: in the tool_result and in
	// toolUseResult.
	g.user([]any{res}, map[string]any{"toolUseResult": map[string]any{"stdout": output, "stderr": "", "interrupted": false}})
}

func (g *generator) output(lines int) string {
	var sb strings.Builder
	for i := range lines {
		fmt.Fprintf(&sb, "%4d\t%s\n", i+1, g.sentence(6+g.r.IntN(10)))
	}
	return sb.String()
}

// turn writes one user request and the agent's work on it.
func (g *generator) turn() {
	dir := pick(g.r, dirs)
	g.user(fmt.Sprintf(pick(g.r, prompts), pick(g.r, idents), dir)+" "+g.sentence(8+g.r.IntN(30)), nil)
	g.assistant([]map[string]any{
		{"type": "thinking", "thinking": g.sentence(30), "signature": "sig"},
		{"type": "text", "text": g.sentence(15 + g.r.IntN(40))},
	})
	for range 1 + g.r.IntN(6) {
		if g.written >= g.o.Messages {
			return
		}
		switch g.r.IntN(5) {
		case 0:
			p := g.o.Project + "/" + g.path()
			g.toolCall("Read", map[string]any{"file_path": p}, g.output(g.sz.read[0]+g.r.IntN(g.sz.read[1])), false)
		case 1:
			p := g.o.Project + "/" + g.path()
			g.toolCall("Edit", map[string]any{"file_path": p, "old_string": g.sentence(12), "new_string": g.sentence(14)},
				"The file "+p+" has been updated successfully.", false)
		case 2:
			cmd := strings.ReplaceAll(pick(g.r, commands), "%s", dir)
			fail := g.r.IntN(3) == 0
			out := g.output(g.sz.bash[0] + g.r.IntN(g.sz.bash[1]))
			if fail {
				// A numbered subtest: a rare identifier (about one in 100,000
				// failures shares it), what benchmarks search for as a user
				// searches for the test that failed yesterday.
				out += fmt.Sprintf("--- FAIL: %s/case_%05d\nFAIL\nExit code 1", pick(g.r, idents), g.r.IntN(100000))
			}
			g.toolCall("Bash", map[string]any{"command": cmd, "description": g.sentence(5)}, out, fail)
		case 3:
			g.toolCall("Grep", map[string]any{"pattern": pick(g.r, idents), "path": g.o.Project}, g.output(g.sz.grep[0]+g.r.IntN(g.sz.grep[1])), false)
		case 4:
			g.toolCall("TodoWrite", map[string]any{"todos": []map[string]any{
				{"content": g.sentence(6), "status": "completed", "activeForm": "Working"},
				{"content": g.sentence(6), "status": "in_progress", "activeForm": "Working"},
				{"content": g.sentence(6), "status": "pending", "activeForm": "Working"}}},
				"Todos have been modified successfully.", false)
		}
		if g.o.CompactEvery > 0 && g.written/g.o.CompactEvery > (g.written-8)/g.o.CompactEvery {
			g.compact()
		}
	}
	g.assistant([]map[string]any{{"type": "text", "text": g.sentence(20 + g.r.IntN(60))}})
	if g.r.IntN(4) == 0 && g.err == nil {
		g.err = g.enc.Encode(map[string]any{"type": "file-history-snapshot", "messageId": g.parent,
			"snapshot": map[string]any{"messageId": g.parent, "trackedFileBackups": map[string]any{}, "timestamp": g.tick()}, "isSnapshotUpdate": false})
	}
}

func (g *generator) compact() {
	pre := g.context
	logical := g.parent
	g.parent = ""
	id := g.line("system", map[string]any{"subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": false,
		"level": "info", "logicalParentUuid": logical, "compactMetadata": map[string]any{"trigger": "auto", "preTokens": pre}})
	g.parent = id
	var sb strings.Builder
	sb.WriteString("This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n")
	for range 40 {
		sb.WriteString(g.sentence(25))
		sb.WriteByte('\n')
	}
	g.user(sb.String(), map[string]any{"isCompactSummary": true, "isVisibleInTranscriptOnly": true})
	g.context = 15000 + int64(g.r.IntN(10000))
}
