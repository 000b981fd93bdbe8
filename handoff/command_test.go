package handoff

import (
	"reflect"
	"testing"
)

func TestAnalyzeShell(t *testing.T) {
	tests := []struct {
		line   string
		test   bool
		key    string
		masked bool
	}{
		{"go test ./...", true, "go test", false},
		{"go test ./... 2>&1 | tail -20", true, "go test", true},
		{"cd /x && go test -race ./...", true, "go test", false},
		{"go vet ./...", false, "go vet", false},
		{"go build ./... && go test ./pkg/ -run TestX", true, "go test", false},
		{"go test ./... ; echo done", true, "go test", true},
		{"cargo test --workspace", true, "cargo test", false},
		{"cargo nextest run", true, "cargo nextest", false},
		{"cargo build", false, "cargo build", false},
		{"npm test", true, "npm test", false},
		{"npm run test:unit -- --watch=false", true, "npm run test:unit", false},
		{"npm run build", false, "npm run build", false},
		{"pnpm test", true, "pnpm test", false},
		{"pnpm vitest run src/a", true, "pnpm vitest", false},
		{"pnpm exec playwright test e2e/a.spec.ts", true, "playwright test", false},
		{"yarn test:e2e", true, "yarn test:e2e", false},
		{"yarn jest --ci", true, "yarn jest", false},
		{"bun test", true, "bun test", false},
		{"npx jest legacy/", true, "jest", false},
		{"npx vitest run", true, "vitest run", false},
		{"pytest -q tests/", true, "pytest", false},
		{"python -m pytest -x", true, "pytest", false},
		{"uv run pytest", true, "pytest", false},
		{"python3 -m unittest discover", true, "unittest discover", false},
		{"python manage.py runserver", false, "python manage.py", false},
		{"mix test test/a_test.exs", true, "mix test", false},
		{"MIX_ENV=test mix run -e 'IO.puts 1'", false, "mix run", false},
		{"MIX_ENV=test mix test", true, "mix test", false},
		{"bundle exec rspec spec/models", true, "rspec", false},
		{"mvn -q clean test", true, "mvn", false},
		{"./gradlew :app:test", true, "gradlew :app:test", false},
		{"./gradlew assembleDebug", false, "gradlew assembleDebug", false},
		{"make test", true, "make test", false},
		{"make check", true, "make check", false},
		{"make build", false, "make build", false},
		{"dotnet test", true, "dotnet test", false},
		{"timeout 60 go test ./...", true, "go test", false},
		{"jest", true, "jest", false},
		{"echo 'go test ./...'", false, "echo 'go test ./...'", false},
		{"grep -r 'npm test' .", false, "grep", false},
		{"git commit -m \"$(cat <<'EOF'\nfix: don't break\n\nlines; here\nEOF\n)\"", false, "git commit", false},
		{"git add -A && git commit -m 'x' && git push", false, "git push", false},
		{"bd sync 2>&1 && git push 2>&1", false, "git push", false},
		{"ls -la | wc -l", false, "ls", false},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			got := analyzeShell(tc.line)
			if got.test != tc.test || got.key != tc.key || got.masked != tc.masked {
				t.Errorf("analyzeShell(%q) = test %v key %q masked %v, want %v %q %v",
					tc.line, got.test, got.key, got.masked, tc.test, tc.key, tc.masked)
			}
		})
	}
}

func TestNormCommand(t *testing.T) {
	tests := []struct{ in, want string }{
		{"go test ./... 2>&1 | tail -20", "go test ./..."},
		{"mix test 2>&1 | tail -n 5 | head -3", "mix test"},
		{"cd /home/dev/app && go test ./...", "go test ./..."},
		{`cd "/home/dev/app" && go test ./...`, "go test ./..."},
		{"cd /elsewhere && go test ./...", "cd /elsewhere && go test ./..."},
		{"cd x &&\n  go test \\\n  ./...", "cd x && go test ./..."},
		{"make lint\nmake test", "make lint; make test"},
		{"  pytest -q  \r\n", "pytest -q"},
		{"go test ./... | grep FAIL", "go test ./... | grep FAIL"},
	}
	for _, tc := range tests {
		if got := normCommand(tc.in, "/home/dev/app"); got != tc.want {
			t.Errorf("normCommand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReadOutcome(t *testing.T) {
	tests := []struct {
		name       string
		text       string
		exit       int
		known      bool
		background string
	}{
		{"claude error", "Exit code 2\nsomething", 2, true, ""},
		{"codex exec", "Chunk ID: 1\nWall time: 1 seconds\nProcess exited with code 101\nOutput:\n", 101, true, ""},
		{"codex formatted", "Exit code: 0\nWall time: 0 seconds\nOutput:\nok", 0, true, ""},
		{"codex json", `{"output":"boom","metadata":{"exit_code":1,"duration_seconds":0.2}}`, 1, true, ""},
		{"task output", "<status>completed</status>\n\n<exit_code>0</exit_code>", 0, true, ""},
		{"notification", "<summary>Background command \"x\" failed (exit code 3)</summary>", 3, true, ""},
		{"claude background", "Command running in background with ID: b0be39e. Output is being written to: /tmp/x", 0, false, "b0be39e"},
		{"codex running", "Chunk ID: 1\nProcess running with session ID 7\nOutput:\n", 0, false, "7"},
		{"plain", "all good", 0, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := readOutcome(tc.text)
			if o.exit != tc.exit || o.exitKnown != tc.known || o.background != tc.background {
				t.Errorf("readOutcome = exit %d known %v background %q, want %d %v %q",
					o.exit, o.exitKnown, o.background, tc.exit, tc.known, tc.background)
			}
		})
	}
}

func TestTestFailed(t *testing.T) {
	tests := []struct {
		runner, out string
		want        bool
	}{
		{"go", "--- FAIL: TestX (0.00s)\nFAIL\tpkg\t0.01s", true},
		{"go", "ok  \tpkg\t0.01s", false},
		{"go build", "FAIL\tpkg [build failed]", true},
		{"go panic", "panic: runtime error: index out of range", true},
		{"mix", "14 doctests, 297 tests, 11 failures", true},
		{"mix ok", "14 doctests, 297 tests, 0 failures", false},
		{"mix compile", "** (CompileError) test/x_test.exs: cannot compile module", true},
		{"pytest", "===== 2 failed, 10 passed in 0.3s =====", true},
		{"pytest error", "===== 1 error in 0.1s =====", true},
		{"pytest ok", "===== 12 passed in 0.3s =====", false},
		{"jest", "Tests:       1 failed, 2 passed, 3 total", true},
		{"jest file", "FAIL src/a.test.ts", true},
		{"vitest", " Test Files  1 failed | 3 passed (4)", true},
		{"mocha", "  3 passing (20ms)\n  1 failing", true},
		{"cargo", "test result: FAILED. 1 passed; 1 failed;", true},
		{"cargo ok", "test result: ok. 2 passed; 0 failed; 0 ignored", false},
		{"cargo compile", "error[E0308]: mismatched types", true},
		{"rspec", "10 examples, 1 failure", true},
		{"mvn", "Tests run: 12, Failures: 2, Errors: 0, Skipped: 0", true},
		{"mvn ok", "Tests run: 12, Failures: 0, Errors: 0, Skipped: 0", false},
		{"dotnet", "Failed!  - Failed:     1, Passed:    20, Skipped:     0", true},
		{"npm", "npm ERR! Test failed.  See above for more details.", true},
		{"make", "make: *** [Makefile:12: test] Error 2", true},
		{"ansi", "\x1b[31mFAIL\x1b[0m src/a.test.ts", true},
	}
	for _, tc := range tests {
		if got := testFailed(stripANSI(tc.out)); got != tc.want {
			t.Errorf("%s: testFailed(%q) = %v, want %v", tc.runner, tc.out, got, tc.want)
		}
	}
}

func TestPatchOps(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: a.go\n@@\n-x\n+y\n*** Add File: b/c.go\n+package c\n" +
		"*** Delete File: d.go\n*** Update File: e.go\n*** Move to: f.go\n*** End Patch"
	got := patchOps(patch)
	want := []patchOp{{"update", "a.go", ""}, {"add", "b/c.go", ""}, {"delete", "d.go", ""}, {"update", "e.go", "f.go"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("patchOps = %+v, want %+v", got, want)
	}
	if got := patchOps("[REDACTED_INPUT len=2571 sha=adb0568c]"); got != nil {
		t.Errorf("redacted patch gave %+v", got)
	}
}

func TestDescribeFailureBasics(t *testing.T) {
	tests := []struct {
		text string
		test bool
		want string
	}{
		{"Exit code 128\nfatal: no upstream branch\nhint", false, "fatal: no upstream branch"},
		{"<tool_use_error>String to replace not found in file.\nString: x</tool_use_error>", false, "String to replace not found in file."},
		{"Exit code 2\nCompiling\n  1) test x\n\n5 tests, 5 failures\n", true, "5 tests, 5 failures"},
		{"Chunk ID: 1\nWall time: 2 seconds\nProcess exited with code 1\nOutput:\nusage: x", false, "usage: x"},
		{"", false, ""},
	}
	for _, tc := range tests {
		if got := describeFailure(tc.text, tc.test, ""); got != tc.want {
			t.Errorf("describeFailure(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
