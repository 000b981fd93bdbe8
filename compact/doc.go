// Package compact is ledger's conversation model and context accounting:
// messages and their content blocks, token estimators, the context meter,
// budgets, model window limits, the split and prune steps, and the
// Compactor that turns a long conversation into a summary plus a preserved
// recent zone. Its LLM summarizer is the sub-package compact/anthropic.
//
// It is pure: no database, no command line, no files except those a caller
// hands in, so Go agent builders can embed it in their own agent loops.
package compact
