package main

import "github.com/agentledger/ledger/compact"

// countTokens estimates the tokens of s with the default (calibrated)
// estimator, the one the meter uses.
func countTokens(s string) int { return compact.DefaultEstimator().Tokens(s) }
