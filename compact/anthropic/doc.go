// Package anthropic is a compact.Summarizer that asks a model over
// Anthropic's Messages API (the official SDK) for the compaction summary.
// It lives apart from package compact so that programs which never call an
// LLM, the ledger binary among them, do not link the SDK.
package anthropic
