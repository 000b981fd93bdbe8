// Package pgtest gives tests a fresh database on the real PostgreSQL
// server named by $LEDGER_TEST_POSTGRES (.ci/run starts a throwaway one).
// Without it, tests that need PostgreSQL skip with a message saying how to
// run them; in CI (CI or LEDGER_REQUIRE_POSTGRES set) they fail instead.
package pgtest
