// Package e2e holds the end-to-end tests of ledger against the real
// coding agents: the pinned Claude Code and Codex CLI (e2e_test.go),
// Gemini CLI, Qwen Code, Copilot CLI, Pi, OpenCode and Kilo CLI
// (cli_agents_test.go), installed
// from npm (agenttest.Agent), run headless in a fake HOME with
// ledger's hooks installed, against agenttest's scripted model server.
// They are a package of their own so that `go test ./...` runs them beside
// cmd/ledger's tests, each with its own time limit. The package has no
// code but its tests.
//
//	go test ./cmd/internal/agenttest/e2e                 # skips without npm
//	LEDGER_REQUIRE_AGENTS=1 go test ./cmd/internal/agenttest/e2e
//	LEDGER_AGENTS_FIXTURES=1 go test -run TestAgentFixtures ./cmd/internal/agenttest/e2e
package e2e
