package handoff

import (
	"reflect"
	"strings"
	"testing"
)

// TestErrorResolution: a failure is open until the same command, or a
// broader run that covers it, passes; looking around is not failing.
func TestErrorResolution(t *testing.T) {
	fail := func(c conversation, id, cmd, out string) conversation {
		return c.call("Bash", id, bash(cmd)).result(id, "Exit code 1\n"+out, true)
	}
	pass := func(c conversation, id, cmd string) conversation {
		return c.call("Bash", id, bash(cmd)).result(id, "ok", false)
	}
	tests := []struct {
		name string
		msgs conversation
		open int // open errors at the end
	}{
		{"go test ./... covers go test ./pkg/x -run T",
			pass(fail(nil, "1", "go test ./pkg/x -run TestY", "--- FAIL: TestY (0.00s)"), "2", "go test ./..."), 0},
		{"go test ./pkg/... covers go test ./pkg/x",
			pass(fail(nil, "1", "go test ./pkg/x", "FAIL"), "2", "go test -race ./pkg/..."), 0},
		{"a narrower run does not cover a broader failure",
			pass(fail(nil, "1", "go test ./...", "FAIL"), "2", "go test ./pkg/x"), 1},
		{"a run of another package does not cover",
			pass(fail(nil, "1", "go test ./a", "FAIL"), "2", "go test ./b"), 1},
		{"a filtered run does not cover an unfiltered one",
			pass(fail(nil, "1", "go test ./pkg/x", "FAIL"), "2", "go test ./pkg/x -run TestOther"), 1},
		{"npx vitest run covers npx vitest run file.test.ts",
			pass(fail(nil, "1", "npx vitest run src/cart.test.ts", "FAIL"), "2", "npx vitest run"), 0},
		{"mix test covers mix test path:line",
			pass(fail(nil, "1", "mix test test/shop/cart_test.exs:42", "1 failure"), "2", "mix test"), 0},
		{"mix test dir covers a file under it",
			pass(fail(nil, "1", "mix test test/shop/cart_test.exs", "1 failure"), "2", "mix test test/shop"), 0},
		{"pytest covers pytest file::test",
			pass(fail(nil, "1", "pytest tests/test_cart.py::test_total -x", "FAILED"), "2", "pytest -q"), 0},
		{"cargo test name filters",
			pass(fail(nil, "1", "cargo test parse_amount", "FAILED"), "2", "cargo test other_name"), 1},
		{"cargo test covers cargo test name",
			pass(fail(nil, "1", "cargo test parse_amount", "FAILED"), "2", "cargo test"), 0},
		{"the same non-test command with other arguments fixes it",
			pass(fail(nil, "1", "git push", "fatal: no upstream"), "2", "git push --set-upstream origin feat"), 0},
		{"a rerun the agent describes the same way fixes it",
			conversation{}.call("Bash", "1", map[string]any{"command": "source scripts/env.sh && check_env", "description": "Check the environment setup"}).
				result("1", "Exit code 1\n(eval):1: permission denied:", true).
				call("Bash", "2", map[string]any{"command": "bash -c 'source scripts/env.sh; check_env'", "description": "Check the environment setup"}).
				result("2", "ok", false), 0},
		{"a later command that contains the failed one fixes it",
			pass(fail(nil, "1", "./scripts/migrate.sh --dry-run", "error: no DB"), "2", "DATABASE_URL=x ./scripts/migrate.sh --dry-run && echo ok"), 0},
		{"grep with no match is not a failure", fail(nil, "1", "grep -rn TODO lib/", ""), 0},
		{"ls of a missing path is not a failure", fail(nil, "1", "ls missing/dir", "ls: cannot access 'missing/dir': No such file or directory"), 0},
		{"which, test -f, git status are not failures",
			fail(fail(fail(nil, "1", "which rg", ""), "2", "test -f .env && echo yes", ""), "3", "git status", "fatal: not a git repository"), 0},
		{"a build piped into grep that finds nothing succeeded", fail(nil, "1", "go build ./... 2>&1 | grep -i error", ""), 0},
		{"but a real command failing is", fail(nil, "1", "npm run build", "Build error occurred"), 1},
		{"a test run is never exploratory, even piped", fail(nil, "1", "go test ./... | grep FAIL", "--- FAIL: TestX"), 1},
		{"a refused Write, then the file written by the shell",
			pass(conversation{}.call("Write", "1", map[string]any{"file_path": "/p/types/index.ts", "content": "x"}).
				result("1", "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>", true),
				"2", "cat > types/index.ts << 'EOF'\nexport {}\nEOF"), 0},
		{"a build error the next build of the same tool no longer shows",
			pass(fail(nil, "1", "cargo build 2>&1", "error[E0425]: cannot find value `cfg` in this scope\n --> src/main.rs:12:5"), "2", "cargo test"), 0},
		{"a compile error a passing test run of the same tool fixed",
			pass(fail(nil, "1", "mix compile --warnings-as-errors", "** (CompileError) lib/shop.ex:3: undefined function x/0"), "2", "mix test test/shop_test.exs"), 0},
		{"but a package script says nothing of another",
			pass(fail(nil, "1", "npm run build", "Build error occurred"), "2", "npm test"), 1},
		{"a git add of an ignored path, redone with the right paths",
			pass(fail(nil, "1", "git add .env.local src/app.ts", "The following paths are ignored by one of your .gitignore files:\n.env.local"), "2", "git add src/app.ts"), 0},
		{"a script and another script are different commands",
			pass(fail(nil, "1", "python scripts/seed.py", "Traceback: KeyError"), "2", "python scripts/report.py"), 1},
		{"pnpm run build fixes pnpm build",
			pass(fail(nil, "1", "pnpm build", "Type error"), "2", "pnpm run build"), 0},
		{"a failed write to the agent's own plan is not the work's",
			conversation{}.call("Write", "1", map[string]any{"file_path": "/home/u/.claude/plans/quick-otter.md", "content": "x"}).
				result("1", "EACCES: permission denied, open '/home/u/.claude/plans/quick-otter.md'", true), 0},
		{"but a shell write of another file does not fix it",
			pass(conversation{}.call("Write", "1", map[string]any{"file_path": "/p/types/index.ts", "content": "x"}).
				result("1", "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>", true),
				"2", "cat > types/state.ts << 'EOF'\nexport {}\nEOF"), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Extract(tc.msgs, ExtractOptions{Project: "/p"})
			if len(d.Errors) != tc.open {
				t.Errorf("open errors = %q, want %d", d.Errors, tc.open)
			}
		})
	}
}

// TestErrorsSayingTheSameThing: failures with the same message are one
// line naming the commands, at the place of the latest.
func TestErrorsSayingTheSameThing(t *testing.T) {
	t.Parallel()
	sudo := "Exit code 1\nsudo: a terminal is required to read the password"
	msgs := conversation{}.
		call("Bash", "1", bash("sudo systemctl restart nginx")).result("1", sudo, true).
		call("Bash", "2", bash("npm run build")).result("2", "Exit code 1\nBuild error occurred", true).
		call("Bash", "3", bash("sudo cp nginx.conf /etc/nginx/")).result("3", sudo, true).
		call("Bash", "4", bash("sudo nginx -t")).result("4", sudo, true)
	d := Extract(msgs, ExtractOptions{Project: "/p"})
	want := []string{"`npm run build`: Build error occurred",
		"`sudo cp nginx.conf /etc/nginx/`, `sudo nginx -t` and 1 more: sudo: a terminal is required to read the password"}
	if !reflect.DeepEqual(d.Errors, want) {
		t.Errorf("Errors\n got %q\nwant %q", d.Errors, want)
	}
}

// TestErrorNamesItsClass: a failure whose message does not name its
// class gets it from the output.
func TestErrorNamesItsClass(t *testing.T) {
	t.Parallel()
	out := "Exit code 1\nGet-Widget : The term 'Get-Widget' is not recognized as the name of a cmdlet.\n" +
		"At line:1 char:1\n+ Get-Widget\n    + CategoryInfo          : ObjectNotFound: (Get-Widget:String) [], CommandNotFoundException\n" +
		"    + FullyQualifiedErrorId : CommandNotFoundException"
	d := Extract(conversation{}.call("Bash", "1", bash("powershell -Command Get-Widget")).result("1", out, true), ExtractOptions{})
	if want := "`powershell -Command Get-Widget`: Get-Widget : The term 'Get-Widget' is not recognized as the name of a cmdlet. (CommandNotFoundException)"; len(d.Errors) != 1 || d.Errors[0] != want {
		t.Errorf("Errors = %q, want %q", d.Errors, want)
	}
	d = Extract(conversation{}.call("Bash", "1", bash("python app.py")).result("1", "Exit code 1\nTraceback (most recent call last):\nKeyError: 'user'", true), ExtractOptions{})
	if len(d.Errors) != 1 || strings.Count(d.Errors[0], "KeyError") != 1 {
		t.Errorf("a message that names its class gets it once: %q", d.Errors)
	}
}

func TestScopeCovers(t *testing.T) {
	sc := func(line string) scope { return analyzeShell(line).scope }
	tests := []struct {
		broad, narrow string
		want          bool
	}{
		{"go test ./...", "go test ./internal/x -run TestY", true},
		{"go test ./internal/...", "go test ./internal/x", true},
		{"go test ./internal/x", "go test ./internal/y", false},
		{"npx vitest run", "npx vitest run src/a.test.ts -t 'adds up'", true},
		{"npx vitest run -t other", "npx vitest run -t 'adds up'", false},
		{"pnpm test", "pnpm test -- src/a.test.ts", true},
		{"mix test", "mix test test/a_test.exs:12", true},
		{"mix test test/a_test.exs", "mix test test/a_test.exs:12", true},
		{"mix test test/a_test.exs:12", "mix test test/a_test.exs", false},
		{"pytest tests/", "pytest tests/test_a.py::test_b", true},
		{"bundle exec rspec", "bundle exec rspec ./spec/a_spec.rb:3", true},
		{"go test ./...", "mix test", false},
	}
	for _, tc := range tests {
		if got := sc(tc.broad).covers(sc(tc.narrow)); got != tc.want {
			t.Errorf("%q covers %q = %v, want %v (scopes %+v, %+v)", tc.broad, tc.narrow, got, tc.want, sc(tc.broad), sc(tc.narrow))
		}
	}
}

// TestDescribeFailure: the error line names what failed, for each runner
// and compiler agents use, on one line.
func TestDescribeFailure(t *testing.T) {
	tests := []struct {
		runner string
		out    string
		test   bool
		want   string
	}{
		{"go test", "=== RUN   TestExpiry\n    session_test.go:42: expired = false, want true\n--- FAIL: TestExpiry (0.00s)\n=== RUN   TestRenew/near_expiry\n--- FAIL: TestRenew (0.00s)\n    --- FAIL: TestRenew/near_expiry (0.00s)\n        session_test.go:77: renewed twice\nFAIL\nFAIL\texample.com/auth\t0.012s",
			true, "2 failed: TestExpiry (session_test.go:42), TestRenew/near_expiry (session_test.go:77) — expired = false, want true"},
		{"go test, one", "--- FAIL: TestExpiry (0.00s)\n    session_test.go:42: expired = false, want true\nFAIL\nFAIL\texample.com/auth\t0.012s",
			true, "TestExpiry (session_test.go:42) — expired = false, want true"},
		{"go build", "# example.com/auth\n./session.go:12:2: undefined: clock\n./session.go:30:9: too many return values\n",
			false, "./session.go:12:2: undefined: clock, ./session.go:30:9: too many return values"},
		{"pytest", "F.\n=================================== FAILURES ===================================\n_________________ test_total _________________\n\n    def test_total():\n>       assert total([1, 2]) == 4\nE       assert 3 == 4\n\ntests/test_cart.py:8: AssertionError\n=========================== short test summary info ============================\nFAILED tests/test_cart.py::test_total - assert 3 == 4\n========================= 1 failed, 1 passed in 0.03s ==========================",
			true, "test_total (tests/test_cart.py:8) — assert 3 == 4"},
		{"jest", "FAIL src/cart.test.ts\n  ● Cart › adds line totals\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 4\n    Received: 3\n\n      at Object.<anonymous> (src/cart.test.ts:12:23)\n\nTests:       1 failed, 3 passed, 4 total",
			true, "Cart › adds line totals (src/cart.test.ts:12:23) — expect(received).toBe(expected) // Object.is equality"},
		{"vitest", " FAIL  src/cart.test.ts > Cart > adds line totals\nAssertionError: expected 3 to be 4 // Object.is equality\n ❯ src/cart.test.ts:12:23\n\n Test Files  1 failed (1)\n      Tests  1 failed | 3 passed (4)",
			true, "Cart > adds line totals (src/cart.test.ts:12:23) — AssertionError: expected 3 to be 4 // Object.is equality"},
		{"mocha", "  3 passing (12ms)\n  1 failing\n\n  1) Cart\n       adds line totals:\n     AssertionError [ERR_ASSERTION]: 3 == 4\n      at Context.<anonymous> (test/cart.test.js:12:12)\n",
			true, "Cart adds line totals (test/cart.test.js:12:12) — AssertionError [ERR_ASSERTION]: 3 == 4"},
		{"playwright", "Running 3 tests using 1 worker\n\n  1) [chromium] › tests/login.spec.ts:12:5 › Login › rejects a bad password ──────────\n\n    Error: expect(received).toBeVisible()\n\n  1 failed\n  2 passed",
			true, "Login › rejects a bad password (tests/login.spec.ts:12:5) — Error: expect(received).toBeVisible()"},
		{"ExUnit", "Running ExUnit with seed: 1, max_cases: 32\n\n  1) test closes every open annotation (ShopWeb.ReviewLiveTest)\n     test/shop_web/live/review_live_test.exs:42\n     Assertion with =~ failed\n     code:  assert html =~ \"Closed 2\"\n\nFinished in 0.3 seconds\n5 tests, 1 failure",
			true, "test closes every open annotation (test/shop_web/live/review_live_test.exs:42) — Assertion with =~ failed"},
		{"cargo test", "running 2 tests\ntest tests::parses ... FAILED\n\nfailures:\n\n---- tests::parses stdout ----\nthread 'tests::parses' panicked at src/lib.rs:10:5:\nassertion `left == right` failed\n\nfailures:\n    tests::parses\n\ntest result: FAILED. 1 passed; 1 failed",
			true, "tests::parses (src/lib.rs:10:5) — assertion `left == right` failed"},
		{"rspec", "Failures:\n\n  1) User validates email\n     Failure/Error: expect(user).to be_valid\n\nFinished in 0.1 seconds\n3 examples, 1 failure\n\nFailed examples:\n\nrspec ./spec/models/user_spec.rb:12 # User validates email",
			true, "User validates email (spec/models/user_spec.rb:12)"},
		{"tsc", "src/cart.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.\nsrc/cart.ts(30,1): error TS2304: Cannot find name 'x'.",
			false, "src/cart.ts:12:5: TS2322: Type 'string' is not assignable to type 'number'., src/cart.ts:30:1: TS2304: Cannot find name 'x'."},
		{"rustc", "error[E0425]: cannot find value `totl` in this scope\n --> src/cart.rs:4:5\n  |\n4 |     totl\n  |     ^^^^ help: a local variable with a similar name exists: `total`\n\nerror: aborting due to 1 previous error",
			false, "src/cart.rs:4:5: cannot find value `totl` in this scope"},
		{"a wrapper that escaped its newlines", `Pre-commit validation failed:\n\n[DIALYZER]\nlib/shop/trace.ex:58:13:pattern_match\nThe pattern can never match the type.\n\nFix these issues before committing.`,
			false, "Pre-commit validation failed: [DIALYZER] lib/shop/trace.ex:58:13: pattern_match — The pattern can never match the type."},
		{"a plain failure", "Exit code 128\nfatal: The current branch feat has no upstream branch.\nTo push the current branch and set the remote as upstream, use",
			false, "fatal: The current branch feat has no upstream branch."},
		{"a bare summary is all there is", "Exit code 1\n 1 failing", true, "1 failing"},
	}
	for _, tc := range tests {
		t.Run(tc.runner, func(t *testing.T) {
			got := describeFailure(tc.out, tc.test, "")
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if strings.Contains(got, `\n`) || strings.Contains(got, "\n") {
				t.Errorf("a line break in %q", got)
			}
		})
	}
}

func TestErrorNamesTheFailingTest(t *testing.T) {
	msgs := conversation{}.call("Bash", "1", bash("go test ./internal/auth/ -run TestExpiry 2>&1 | tail -20")).
		result("1", "Exit code 1\n--- FAIL: TestExpiry (0.00s)\n    session_test.go:42: expired = false, want true\nFAIL\nFAIL\texample.com/auth\t0.012s", true)
	d := Extract(msgs, ExtractOptions{Project: "/p"})
	want := []string{"`go test ./internal/auth/ -run TestExpiry`: TestExpiry (internal/auth/session_test.go:42) — expired = false, want true"}
	if !reflect.DeepEqual(d.Errors, want) {
		t.Errorf("Errors = %q, want %q", d.Errors, want)
	}
}
